import { GpuRentalClient, GpuRentalError, Instance, InterruptedError, sweepCommand, tokenOfInstance } from "../../sdk";

/**
 * What the resources do so that a creation cut off part-way (a cancelled CI job, a killed process, a service
 * failing) never leaves an object billing outside the stack's state: see docs/workflows.md, "Deploys cut off".
 */

/**
 * A creation (or an update) that made something and did not finish: interrupted while an instance booted, or
 * failed with an instance that could not be destroyed. The Pulumi shells answer it as the engine's "created, but
 * failed to initialise" (`id`, `properties`, `reasons`: what both of @pulumi/pulumi's provider servers read from
 * an error), so the stack's state holds the object and the next `up` goes on with it, or replaces it.
 */
export class PartialCreationError extends GpuRentalError {
  override name = "PartialCreationError";
  /** The outputs the state records, marked PARTIAL_OUTPUT (a shell may add to them: secrets, its own keys). */
  properties: Record<string, unknown>;
  constructor(
    message: string,
    readonly id: string,
    outputs: object,
    readonly reasons: string[] = [message],
  ) {
    super(message);
    this.properties = { ...outputs, [PARTIAL_OUTPUT]: true };
  }
}

/**
 * The output that marks a state record of a partial creation (not declared: no program reads it): the next diff
 * looks at the service for what became of the object. The update that finishes it records outputs without it.
 */
export const PARTIAL_OUTPUT = "__partial";

/** What the messages of a partial creation say becomes of the object. */
export const KEPT_IN_STATE = "It is kept in the stack's state: the next `pulumi up` goes on with it (or replaces it), `pulumi destroy` destroys it.";

/** An InterruptedError of a creation as a resource reports it: what may exist, and what finds it. */
export function interruptedCreation(error: InterruptedError, what: string): GpuRentalError {
  if (!error.token) return new GpuRentalError(`${what} was interrupted before anything was made.`);
  return new GpuRentalError(
    `${what} was interrupted while its request was under way: what it made may exist, carrying token ${error.token}. ` +
      `The next \`pulumi up\` of this stack takes it over (or removes it, if the program changed); \`${sweepCommand(error.token)}\` removes it.`,
  );
}

/** Every instance of the account carrying one of `tokens`, by token (one listing): what cut-off earlier creations left. */
export async function instancesCarrying(client: GpuRentalClient, tokens: readonly string[]): Promise<Map<string, Instance[]>> {
  return only(await byToken(client), tokens);
}

/**
 * What cut-off earlier runs left in one account, for the creations of one provider context (one `pulumi up`): one
 * listing, at the context's first creation, instead of one a creation (200 Instances listed up to 200 instances
 * each). Whatever an earlier run left exists before this one starts, so it is in that listing. A creation of this
 * context that fails, or finds something, may leave what the listing lacks: the next creation lists again.
 */
export class LeftBehind {
  private listing: Promise<Map<string, Instance[]>> | undefined;

  constructor(private readonly client: GpuRentalClient) {}

  async carrying(tokens: readonly string[]): Promise<Map<string, Instance[]>> {
    const listing = (this.listing ??= byToken(this.client));
    try {
      return only(await listing, tokens);
    } catch (error) {
      if (this.listing === listing) this.listing = undefined;
      throw error;
    }
  }

  /** The next creation lists again. */
  forget(): void {
    this.listing = undefined;
  }
}

async function byToken(client: GpuRentalClient): Promise<Map<string, Instance[]>> {
  const found = new Map<string, Instance[]>();
  for (const instance of await client.instances.list()) {
    const token = tokenOfInstance(instance);
    if (token) found.set(token, [...(found.get(token) ?? []), instance]);
  }
  return found;
}

function only(found: Map<string, Instance[]>, tokens: readonly string[]): Map<string, Instance[]> {
  return new Map(tokens.flatMap((token) => (found.has(token) ? [[token, found.get(token)!] as const] : [])));
}
