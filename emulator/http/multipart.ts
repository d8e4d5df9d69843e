/** A `multipart/form-data` body: its text fields, and its files by field name. */
export interface Form {
  fields: Record<string, string>;
  files: Record<string, Buffer>;
}

/** Reads a form (RFC 7578) whole: undefined when the body is not one of the boundary its Content-Type names. */
export function readForm(contentType: string, body: Buffer): Form | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const form: Form = { fields: {}, files: {} };
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === "--") return form;
    const headersEnd = body.indexOf("\r\n\r\n", at);
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headersEnd);
    if (headersEnd < 0 || next < 0) return undefined;
    const headers = body.subarray(at, headersEnd).toString("utf8");
    const content = body.subarray(headersEnd + 4, next);
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? "";
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name !== undefined) {
      if (/\bfilename="/i.test(disposition)) form.files[name] = Buffer.from(content);
      else form.fields[name] = content.toString("utf8");
    }
    at = next + 2;
  }
}
