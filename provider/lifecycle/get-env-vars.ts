import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEnvVars function: the names of the account's environment variables (values are never shown). Read-only. */

const GetEnvVarsArgs = z.object({});
type GetEnvVarsArgs = z.infer<typeof GetEnvVarsArgs>;

const Result = z.object({ names: z.array(z.string()).meta({ description: "The variables' names, sorted." }) });

export const GET_ENV_VARS: LookupFunction<GetEnvVarsArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getEnvVars",
    description:
      "The names of the account's environment variables (upper-cased, sorted): what every instance created now gets. Their values " +
      "are never shown, by the service nor here. An EnvVar declaring one of them takes it over.",
    args: GetEnvVarsArgs,
    result: Result,
    example: { args: {}, exports: "names" },
  }),
  args: specOf("getEnvVars", GetEnvVarsArgs),
  async invoke(_args, op) {
    return { names: Object.keys(await op.client.envVars.list()).sort() };
  },
};
