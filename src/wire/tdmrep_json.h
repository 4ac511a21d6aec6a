/*
 * tdmrep_json.h: tdmrep.json (TDMRep CG final report, section 3.1) read
 * with jansson into librobots' TDMRep rules (robots/tdmrep.h), under the
 * limits that header states.
 */
#ifndef WIRE_TDMREP_JSON_H
#define WIRE_TDMREP_JSON_H

#include <stddef.h>

#include "robots/tdmrep.h"

/*
 * Parse body (len bytes, a leading UTF-8 BOM skipped) as tdmrep.json.
 * Returns the rules (possibly none), or NULL with *err set when the file
 * as a whole is invalid; *err is TDMREP_OK on success. jansson's message
 * for TDMREP_E_JSON goes to why (may be NULL, at least 160 bytes). Each
 * array member that cannot be a rule is skipped with a warning: not an
 * object, no string location, tdm-reservation not the JSON number 0 or 1
 * (1.0 and 1e0 are 1), a tdm-policy present and not a string. Members
 * after the first TDMREP_MAX_RULES are ignored with one warning.
 */
struct tdmrep *tdmrep_json_parse(
    const char *body, size_t len, enum tdmrep_error *err, char *why);

#endif /* WIRE_TDMREP_JSON_H */
