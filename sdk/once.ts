/** `fn`, made to act the first time it is called only (an ending that several paths may reach). */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) fn();
    done = true;
  };
}
