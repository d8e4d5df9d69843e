import { z } from "zod";
import { NotFoundError } from "../../sdk";
import { instanceSummary, InstanceSummary } from "./get-instances";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getInstance function: one instance of the account, by id. Read-only. */

const GetInstanceArgs = z.object({ id: z.number().int().positive().meta({ description: "The instance's id." }) });
type GetInstanceArgs = z.infer<typeof GetInstanceArgs>;

export const GET_INSTANCE: LookupFunction<GetInstanceArgs, InstanceSummary> = {
  description: describeFunction({
    name: "getInstance",
    description: "One instance of the account, by id, as the service shows it now (an instance made elsewhere, say). An id the account does not have fails.",
    args: GetInstanceArgs,
    result: InstanceSummary,
    example: { args: { id: 4242 }, exports: "status" },
  }),
  args: specOf("getInstance", GetInstanceArgs),
  async invoke(args, op) {
    const instance = await op.client.instances.get(args.id);
    if (!instance) throw new NotFoundError(`getInstance: the account has no instance ${args.id}. Check the id, and the account the program uses.`);
    return instanceSummary(instance);
  },
};
