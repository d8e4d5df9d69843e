import type { GpuRentalClient } from "../client";
import { REAL_TIME } from "../clock";
import { CreateApiKeyRequest, Volume } from "../schemas";
import { VOLUME_KINDS, VolumeKind } from "../volumes";
import { Creation, createOnce, CreationOptions, FailureBudget, NotCreatedError } from "./create-once";
import { nameWithToken, tokenOfApiKey, tokenOfVolume } from "./tokens";

type CreatedKey = Awaited<ReturnType<GpuRentalClient["apiKeys"]["create"]>>;

export interface CreateOptions extends CreationOptions {
  /** Time budget of the creation, its retries included. Default 2 minutes. */
  deadlineMs?: number;
}

/**
 * Creates a volume (network, or local on an offer's machine) that carries a token in its name (`<name>-<token>`):
 * a creation whose answer was lost is found by it, one that certainly failed is sent again with a new token, so
 * no volume is ever made twice or left unknown.
 */
export async function createVolumeOnce(
  client: GpuRentalClient,
  kind: VolumeKind,
  request: { offerId: number; size: number; name?: string },
  options: CreateOptions = {},
): Promise<{ volume: Volume; token: string }> {
  const { path, what } = VOLUME_KINDS[kind];
  const create = kind === "network_volume" ? client.volumes.createNetwork : client.volumes.createLocal;
  return untilMade(options, `${what} creation (PUT ${path})`, async () => {
    const created = await createOnce(
      {
        what: `A ${request.size} GB ${what} on offer ${request.offerId}`,
        send: (token) => create({ ...request, name: nameWithToken(request.name, token) }),
        find: async (token) => (await client.volumes.list(kind)).find((v) => tokenOfVolume(v) === token) ?? null,
      },
      options,
    );
    return { volume: created.recovered ? created.found : created.answer, token: created.token };
  });
}

/** createVolumeOnce of a network volume. */
export const createNetworkVolumeOnce = (client: GpuRentalClient, request: { offerId: number; size: number; name?: string }, options: CreateOptions = {}) =>
  createVolumeOnce(client, "network_volume", request, options);

/**
 * Creates an API key that carries a token in its name. The key's value is in the creation's answer only: a key
 * found by its token after a lost answer is useless to its caller, so it is revoked and the key made again.
 */
export async function createApiKeyOnce(
  client: GpuRentalClient,
  request: CreateApiKeyRequest,
  options: CreateOptions = {},
): Promise<{ created: CreatedKey; token: string }> {
  return untilMade(options, "API key creation (POST /api/v0/auth/apikeys/)", async () => {
    const creation: Creation<CreatedKey, { id: number }> = {
      what: `API key ${JSON.stringify(request.name ?? "")}`,
      send: (token) => client.apiKeys.create({ ...request, name: nameWithToken(request.name, token) }),
      find: async (token) => (await client.apiKeys.list()).find((k) => tokenOfApiKey(k) === token) ?? null,
    };
    const created = await createOnce(creation, options);
    if (!created.recovered) return { created: created.answer, token: created.token };
    await client.apiKeys.delete(created.found.id);
    throw new NotCreatedError(`API key ${created.found.id} was made but the answer with its value was lost: it is revoked again.`, created.token);
  });
}

/**
 * Runs `attempt` again while it certainly made nothing (a NotCreatedError), within the time budget; a service
 * that keeps failing for the failure budget ends it sooner (ServiceFailingError).
 */
async function untilMade<T>(options: CreateOptions, what: string, attempt: () => Promise<T>): Promise<T> {
  const clock = options.clock ?? REAL_TIME;
  const deadline = clock.now() + (options.deadlineMs ?? 120_000);
  const failing = new FailureBudget(options, what);
  for (let tries = 1; ; tries++) {
    failing.begin();
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof NotCreatedError) || clock.now() >= deadline) throw error;
      failing.failed(`try ${tries}`, error.failure ?? error);
      await failing.pause(tries);
    }
  }
}
