import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "./helpers/provider-host";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), ...args], { encoding: "utf8", timeout: 20_000 });

describe("gpu-rental command", () => {
  it("prints its usage", () => {
    const res = cli("--help");
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/emulator[\s\S]*deploy[\s\S]*toolchain/);
  });

  it.each([
    [["emulator", "--port", "http"], /--port must be a number from 0 to 65535/],
    [["emulator", "--contention", "2"], /--contention must be a number from 0 to 1/],
    [["emulator", "--api-key", "short"], /--api-key must be at least 8 characters/],
    [["emulator", "--colour"], /Unknown option '--colour'/],
    [["launch"], /Unknown command "launch"/],
  ])("refuses %j with a clear message and exit code 2", (args, message) => {
    const res = cli(...args);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});
