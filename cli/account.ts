import { Connection, ENV_API_KEY, ENV_API_URL } from "../sdk";

/**
 * The account of `gpu-rental sweep`, `spend`, `job` and `logs`: the environment's GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY, and
 * nothing else (never a key on the command line, where other users of the machine see it; no stack config, which
 * these commands do not read). A missing one is an error that says how to set it for this command.
 */
export function accountFromEnvironment(command: "sweep" | "spend" | "job" | "logs"): Connection {
  const apiUrl = process.env[ENV_API_URL];
  const apiKey = process.env[ENV_API_KEY];
  const missing = [!apiUrl && ENV_API_URL, !apiKey && ENV_API_KEY].filter(Boolean);
  if (apiUrl && apiKey) return { apiUrl, apiKey };
  const key = { spend: "a key that may read billing", job: "a key that may rent, destroy and read billing", logs: "a key that may read instances", sweep: "a key that may destroy what it finds" }[command];
  throw new Error(
    `${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set: gpu-rental ${command} reads the account from the environment only. ` +
      `Run \`export ${ENV_API_URL}=<the service's URL> ${ENV_API_KEY}=<${key}>\` first (for the local emulator, \`gpu-rental emulator\` prints both).`,
  );
}
