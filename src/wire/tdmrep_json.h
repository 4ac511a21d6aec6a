/*
 * tdmrep_json.h: tdmrep.json (TDMRep CG final report, section 3.1) read
 * with jansson into librobots' TDMRep rules (robots/tdmrep.h), under the
 * limits that header states.
 */
#ifndef WIRE_TDMREP_JSON_H
#define WIRE_TDMREP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "robots/tdmrep.h"

/*
 * Parse body (len bytes, a leading UTF-8 BOM skipped) as tdmrep.json.
 * Returns the rules (possibly none), or NULL with *err set when the file
 * as a whole is invalid; *err is TDMREP_OK on success. jansson's message
 * for TDMREP_E_JSON goes to why (may be NULL, at least 160 bytes). Each
 * array member that cannot be a rule is skipped with a warning: not an
 * object, no string location (or one with a NUL), tdm-reservation not
 * the JSON number 0 or 1 (1.0 and 1e0 are 1; a number no double holds,
 * 1e400, is neither, and no reason to refuse the file), a tdm-policy
 * present and not a string. Members after the first TDMREP_MAX_RULES are
 * ignored with one warning.
 */
struct tdmrep *tdmrep_json_parse(
    const char *body, size_t len, enum tdmrep_error *err, char *why);

/* A tdmrep.json as read: its rules or why it is invalid, for warnings. */
struct tdmrep_file {
	struct tdmrep *rules; /* NULL when the file is invalid */
	enum tdmrep_error error;
	char why[160];   /* jansson's message for TDMREP_E_JSON, else "" */
	uint32_t *lines; /* the line each kept warning's member starts on */
	size_t nlines;
};

/*
 * Parse body as tdmrep_json_parse() does into *f (tdmrep_file_clear()
 * after), with the line of each warned member. Returns 0, or -1 when out
 * of memory (f then holds nothing).
 */
int tdmrep_file_read(struct tdmrep_file *f, const char *body, size_t len);
void tdmrep_file_clear(struct tdmrep_file *f);

/*
 * The text of warning i of f (i < the warnings kept) into out (n bytes),
 * its code in *code and its line (0: none) in *line; -1 when i is past
 * them. i 0 of an invalid file is why it is invalid; after the warnings
 * kept, one tdmrep_warnings_dropped counts those that were not.
 */
int tdmrep_file_warning(const struct tdmrep_file *f, size_t i,
    const char **code, uint32_t *line, char *out, size_t n);

#endif /* WIRE_TDMREP_JSON_H */
