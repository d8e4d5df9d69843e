import * as fs from "node:fs";
import * as path from "node:path";

export interface MadeWholeOptions {
  /**
   * Remove what is at the folder's place before the rename (one a killed maker left half made, or an old one),
   * instead of keeping it.
   */
  replace?: boolean;
}

/**
 * `folder`, made by `fill` in a stage beside it (`<folder>.partial-<random>`) and then renamed into place, so no
 * process finds it half made and a fill that fails leaves nothing. Of two processes making it at once (the same
 * content), the second finds the first's and drops its own stage. An async `fill` makes the answer a promise.
 */
export function madeWhole(folder: string, fill: (stage: string) => Promise<void>, options?: MadeWholeOptions): Promise<string>;
export function madeWhole(folder: string, fill: (stage: string) => void, options?: MadeWholeOptions): string;
export function madeWhole(folder: string, fill: (stage: string) => void | Promise<void>, { replace = false }: MadeWholeOptions = {}): string | Promise<string> {
  fs.mkdirSync(path.dirname(folder), { recursive: true });
  const stage = fs.mkdtempSync(`${folder}.partial-`);
  const place = () => {
    if (replace) fs.rmSync(folder, { recursive: true, force: true });
    try {
      fs.renameSync(stage, folder);
    } catch (error) {
      if (!fs.existsSync(folder)) throw error;
    }
    return folder;
  };
  const drop = () => fs.rmSync(stage, { recursive: true, force: true });
  let filling: void | Promise<void>;
  try {
    filling = fill(stage);
  } catch (error) {
    drop();
    throw error;
  }
  if (filling instanceof Promise) return filling.then(place).finally(drop);
  try {
    return place();
  } finally {
    drop();
  }
}
