import type { z } from "zod";
import type { Caller } from "./call";
import type { Patience } from "./pacing";
import { BadRequestError, foundOrNull, GpuRentalError, ListingError, ResponseValidationError } from "./errors";
import {
  ChangeBidRequest,
  CreateInstanceRequest,
  CreateInstanceResponse,
  describeIssues,
  FAILED_STATUSES,
  FieldFilter,
  Instance,
  InstanceOrder,
  InstancePageResponse,
  InstanceResponse,
  SuccessResponse,
  UpdateInstanceRequest,
} from "./schemas";

/**
 * An instance listing: `select_filters` in the operators of offer search, over the fields the service lists by
 * (`{ label: { eq: "x" } }`; emulator/domain/instances.ts INSTANCE_FIELDS), so the service narrows the rows.
 */
export interface InstanceQuery {
  filters?: Record<string, FieldFilter>;
  /** Default: by id, ascending (a stable order while paging). */
  order?: InstanceOrder;
}

/** Rows a page of `GET /api/v1/instances/` (the service's most; the public Python client asks for 25). */
const INSTANCE_PAGE = 25;
/** A bound on the pages of one listing: a service whose tokens never end must not keep a client forever. */
const MAX_PAGES = 10_000;
const INSTANCE_LISTING = "The instance listing (GET /api/v1/instances/)";

/**
 * What instance creation answers: the service's answer, and `refusal` when the service refused and made the
 * instance all the same, and it was kept as exactly what the request asked for (see strayInstance).
 */
export type CreatedInstance = CreateInstanceResponse & { refusal?: GpuRentalError };

export interface InstanceCreateOptions {
  /**
   * Keep an instance that a refused creation made all the same when it is exactly what was asked for (default
   * true). A caller that needs the instance's key (which a refusal does not carry) says false: it is destroyed.
   */
  keepAsRequested?: boolean;
  /** How long the creation may wait for the service's rate limit (a rental's deadline), and who is told. */
  patience?: Patience;
}

/**
 * Accepts an offer (`PUT /api/v0/asks/{offer_id}/`). Throws OfferUnavailableError when it is gone. A refusal
 * that made an instance all the same (its `new_contract`, at any status) never leaves it billing unseen: see
 * strayInstance.
 */
async function createInstance(client: Caller, offerId: number, request: CreateInstanceRequest, options: InstanceCreateOptions = {}): Promise<CreatedInstance> {
  const body = parseRequest(CreateInstanceRequest, request, "instance creation");
  try {
    return await client.call({ method: "PUT", path: `/api/v0/asks/${offerId}/`, body, schema: CreateInstanceResponse, idempotent: false }, options.patience);
  } catch (error) {
    if (error instanceof GpuRentalError && error.newContract !== undefined) return strayInstance(client, body, error, options.keepAsRequested ?? true);
    throw error;
  }
}

/**
 * The instance a refused creation made anyway (the live service does so for a bid below the minimum: an error
 * with `new_contract`, at 400 or at 200 with `success: false`; the instance exists, stopped, billing storage). It
 * is kept only when it is exactly what the request asked for and usable (in the requested state, not failed):
 * then the answer carries the refusal. Otherwise it is destroyed and the refusal thrown, saying so
 * (`strayInstance.outcome`); if the destruction fails too, the error says which instance is left.
 */
async function strayInstance(client: Caller, request: CreateInstanceRequest, refusal: GpuRentalError, keep: boolean): Promise<CreatedInstance> {
  const id = refusal.newContract!;
  // Undefined when it could not be read: it may exist, so it is destroyed all the same.
  const instance = await getInstance(client, id).catch(() => undefined);
  if (keep && instance && isAsRequested(instance, request)) {
    refusal.message += ` The service made instance ${id} all the same, as requested: it is kept.`;
    return { success: true, new_contract: id, refusal };
  }
  try {
    if (instance !== null) await foundOrNull(() => destroyInstance(client, id));
    refusal.strayInstance = { id, outcome: "destroyed" };
    refusal.message += ` The service made instance ${id} all the same: it was destroyed, nothing is left billing.`;
  } catch (cleanup) {
    refusal.strayInstance = { id, outcome: "left" };
    refusal.message += ` The service made instance ${id} all the same, and destroying it failed (${(cleanup as Error).message}): destroy it by hand (DELETE /api/v0/instances/${id}/).`;
  }
  throw refusal;
}

/** Whether an instance is what a creation request asked for, and usable: in the requested state, and not failed. */
function isAsRequested(instance: Instance, request: CreateInstanceRequest): boolean {
  if (instance.actual_status && FAILED_STATUSES.includes(instance.actual_status) && instance.intended_status !== "stopped") return false;
  return (instance.intended_status ?? instance.cur_state) === (request.target_state ?? "running");
}

/**
 * Every instance that matches `query`, page after page (`GET /api/v1/instances/`, following `next_token` to the
 * end). A page that fails, says `success: false` or cannot be read is a ListingError, never a shorter listing.
 */
async function listInstances(client: Caller, query: InstanceQuery = {}): Promise<Instance[]> {
  const rows: Instance[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await instancePage(client, query, token);
    rows.push(...page.instances);
    if (!page.next_token) return rows;
    if (seen.has(page.next_token)) throw listingError(`its pages come round again (next_token ${JSON.stringify(page.next_token)} twice)`);
    seen.add(page.next_token);
    token = page.next_token;
  }
  throw listingError(`it has more than ${MAX_PAGES} pages`);
}

async function instancePage(client: Caller, query: InstanceQuery, afterToken: string | undefined): Promise<InstancePageResponse> {
  const params = new URLSearchParams({
    select_filters: JSON.stringify(query.filters ?? {}),
    order_by: JSON.stringify(query.order ?? [{ col: "id", dir: "asc" }]),
    limit: String(INSTANCE_PAGE),
    ...(afterToken !== undefined && { after_token: afterToken }),
  });
  try {
    return await client.call({ method: "GET", path: `/api/v1/instances/?${params}`, schema: InstancePageResponse });
  } catch (error) {
    throw error instanceof GpuRentalError ? new ListingError(INSTANCE_LISTING, error) : error;
  }
}

function listingError(why: string): ListingError {
  return new ListingError(INSTANCE_LISTING, new ResponseValidationError(why));
}

/** The instance, or null when it does not exist (or is not yours). */
async function getInstance(client: Caller, id: number): Promise<Instance | null> {
  return (await client.call({ method: "GET", path: `/api/v0/instances/${id}/`, schema: InstanceResponse })).instances;
}

async function updateInstance(client: Caller, id: number, change: UpdateInstanceRequest): Promise<void> {
  const body = parseRequest(UpdateInstanceRequest, change, "instance update");
  await client.call({ method: "PUT", path: `/api/v0/instances/${id}/`, body, schema: SuccessResponse });
}

/** A new bid for an interruptible instance, $/hour. */
async function changeBid(client: Caller, id: number, price: number): Promise<void> {
  const body = parseRequest(ChangeBidRequest, { client_id: "me", price }, "bid change");
  await client.call({ method: "PUT", path: `/api/v0/instances/bid_price/${id}/`, body, schema: SuccessResponse });
}

/** Reboots a running instance (its files kept) or recycles it (made anew from its image): it boots again, onstart too. */
async function restart(client: Caller, id: number, how: "reboot" | "recycle"): Promise<void> {
  await client.call({ method: "PUT", path: `/api/v0/instances/${how}/${id}/`, schema: SuccessResponse });
}

async function destroyInstance(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/instances/${id}/`, schema: SuccessResponse });
}

/** Validates a request before it is sent, so a bad input fails here with a clear message and nothing is created. */
function parseRequest<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new BadRequestError(`Invalid ${what} request: ${describeIssues(parsed.error)}`, { code: "invalid_args" });
  }
  return parsed.data;
}

/** `client.instances`: `get` answers null for one that does not exist (or is not yours), as for every kind. */
export function instancesApi(client: Caller) {
  return {
    create: (offerId: number, request: CreateInstanceRequest, options?: InstanceCreateOptions) => createInstance(client, offerId, request, options),
    list: (query?: InstanceQuery) => listInstances(client, query),
    get: (id: number) => getInstance(client, id),
    update: (id: number, change: UpdateInstanceRequest) => updateInstance(client, id, change),
    start: (id: number) => updateInstance(client, id, { state: "running" }),
    stop: (id: number) => updateInstance(client, id, { state: "stopped" }),
    changeBid: (id: number, price: number) => changeBid(client, id, price),
    reboot: (id: number) => restart(client, id, "reboot"),
    recycle: (id: number) => restart(client, id, "recycle"),
    destroy: (id: number) => destroyInstance(client, id),
  };
}
