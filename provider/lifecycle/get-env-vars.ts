import { z } from "zod";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEnvVars function: the names of the account's environment variables (values are never shown). Read-only. */

const GetEnvVarsArgs = z.object({});
type GetEnvVarsArgs = z.infer<typeof GetEnvVarsArgs>;

export const GET_ENV_VARS: LookupFunction<GetEnvVarsArgs, { names: string[] }> = {
  description: {
    name: "getEnvVars",
    description:
      "The names of the account's environment variables (upper-cased, sorted): what every instance created now gets. Their values " +
      "are never shown, by the service nor here. An EnvVar declaring one of them takes it over.",
    inputs: {},
    outputs: { names: { type: "array", items: { type: "string" }, description: "The variables' names, sorted." } },
    requiredOutputs: ["names"],
    example: { args: {}, exports: "names" },
  },
  args: specOf("getEnvVars", GetEnvVarsArgs),
  async invoke(_args, op) {
    return { names: Object.keys(await op.client.envVars.list()).sort() };
  },
};
