// write.mjs FILE: write the captures given as JSON lines on stdin
// ({"url","date","status","reason","headers":[[name,value]...],"body":
// base64}) to FILE as a WARC 1.1 file of response records, each gzipped
// on its own, with warcio, the Webrecorder project's WARC writer: the
// kind of file another crawler leaves, for robotsctl recheck --warc. The
// payload bytes are written as given (chunks, gzip and all).
import { writeFileSync } from "node:fs";
import { WARCRecord, WARCSerializer } from "warcio";

const lines = [];
for await (const chunk of process.stdin) lines.push(chunk);
const out = [];
for (const line of Buffer.concat(lines).toString().split("\n")) {
  if (line.trim() === "") continue;
  const c = JSON.parse(line);
  const body = Buffer.from(c.body, "base64");
  const record = WARCRecord.create(
    {
      url: c.url,
      date: c.date,
      type: "response",
      warcVersion: "WARC/1.1",
      statusline: `HTTP/1.1 ${c.status} ${c.reason}`,
      httpHeaders: c.headers,
      keepHeadersCase: true,
    },
    (async function* () {
      yield new Uint8Array(body);
    })(),
  );
  out.push(await WARCSerializer.serialize(record, { gzip: true }));
}
writeFileSync(process.argv[2], Buffer.concat(out));
