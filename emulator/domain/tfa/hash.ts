import { createHash } from "node:crypto";

/** Codes (sent codes, backup codes) are only ever compared, so only this digest of them is stored. */
export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
