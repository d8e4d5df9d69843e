const fs = require("node:fs");

module.exports = async function globalTeardown() {
  if (process.env.GPU_RENTAL_PACK_DIR) fs.rmSync(process.env.GPU_RENTAL_PACK_DIR, { recursive: true, force: true });
  if (process.env.GPU_RENTAL_INSTALLS_OWNED) fs.rmSync(process.env.GPU_RENTAL_INSTALLS, { recursive: true, force: true });
};
