import * as fs from "node:fs";
import * as path from "node:path";
import { userCacheDir } from "./cache-dir";
import { madeWhole } from "./made-whole";

/** A file of the package built into the release's executable: its text, and its mode (scripts run). */
export interface EmbeddedFile {
  text: string;
  mode: number;
}

/**
 * The release executable's package root (./package-root.ts): the package files built into it, unpacked into the
 * cache once per content (`package-v<version>-<key>`, some 400 kB) and reused by every later start. Written into a
 * stage beside it, then renamed into place, so a process never finds it half made; of two processes unpacking at
 * once, the second finds the first's folder and drops its own.
 */
export function unpackedPackage(files: Record<string, EmbeddedFile>, key: string): string {
  const version = JSON.parse(files["package.json"].text).version as string;
  const cache = userCacheDir();
  const root = path.join(cache, `package-v${version}-${key}`);
  if (fs.existsSync(root)) return root;
  return madeWhole(root, (stage) => {
    for (const [file, { text, mode }] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
      fs.writeFileSync(path.join(stage, file), text, { mode });
    }
  });
}
