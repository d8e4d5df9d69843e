import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  ChangeBidRequest,
  RestartRequest,
  CreateInstanceRequest,
  CreateInstanceResponse,
  InstanceListResponse,
  InstancePageResponse,
  InstanceResponse,
  RuntypeWords,
  sortableField,
  SortDirection,
  SuccessResponse,
  typedFilters,
  UpdateInstanceRequest,
} from "../../sdk/schemas";
import { Principal } from "../domain/accounts";
import { badRequest, forbidden, notFound, ServiceError } from "../domain/errors";
import { search } from "../domain/filters";
import { COMPUTED_INSTANCE_FIELDS, INSTANCE_FIELDS, instanceView } from "./views/instances";
import { Marketplace } from "../domain/marketplace";
import { accepting, jsonEncoded, optionalField } from "./accepting";
import { AcceptedOfferSearch } from "./offers";
import { deprecationBody } from "./moves";
import { AfterToken, pageOf } from "./paging";
import { idParam, route } from "./routes";

/** Instance creation as the service takes it: `runtype` also as the words the public Python client joins. */
const AcceptedCreate = accepting(CreateInstanceRequest, { fields: { runtype: optionalField(RuntypeWords) } });

/** `PUT /api/v0/launch_instance/`: the creation fields plus `q`, the offer search that picks the offer. */
const LaunchRequest = accepting(CreateInstanceRequest, { fields: { runtype: optionalField(RuntypeWords), q: AcceptedOfferSearch } });

/** What refuses a creation that its schema allows (see RouteSpec.rules). */
const CREATION_RULES =
  "invalid_price for a price on an on-demand-only offer or below the minimum bid; args_str with a runtype other than args; " +
  "volume_info naming a volume that is not yours, a local volume of another machine or in use, an offer that is no volume offer, or no size to create one";

/** A page of the instance listing holds at most this many instances (the public Python client asks for 25). */
export const INSTANCE_PAGE = 25;

/**
 * `GET /api/v1/instances/`: each parameter JSON-encoded (docs/service-facts.md#paths-beyond-the-spec). `after_token` is the `next_token` of
 * the page before. `limit` above 25 is read as 25. (`select_cols` is ignored: rows are whole.)
 */
const InstancePageQuery = z.object({
  select_filters: jsonEncoded(z.object(typedFilters(INSTANCE_FIELDS)).catchall(z.unknown()), {}).optional(),
  order_by: jsonEncoded(z.array(z.object({ col: sortableField(INSTANCE_FIELDS), dir: SortDirection })), []).optional(),
  limit: z.number().int().positive().optional(),
  after_token: AfterToken.optional(),
});

const InstancePage = InstancePageResponse.extend({
  success: z.literal(true),
  /** The rows of this page. */
  instances_found: z.number().int(),
  total_instances: z.number().int(),
  next_token: z.string().nullable(),
  label_counts: z.record(z.string(), z.number().int()),
});

/** How the instance endpoints answer (options of the server, ServerOptions). */
export interface InstanceRouteOptions {
  /**
   * Serve the retired `GET /api/v0/instances/` as it answered before the live service retired it (2026-08-20), for
   * old scripts. Default false: it answers as the live service does now (emulator/INSTANCES.md).
   */
  legacyInstanceListing?: boolean;
}

/** Instance creation (accepting an ask), launch by criteria, and the instance endpoints. */
export function registerInstances(app: FastifyInstance, market: Marketplace, options: InstanceRouteOptions = {}): void {
  const view = (instance: Parameters<typeof instanceView>[0]) => instanceView(instance, market.clock.now(), market.lifecycle);
  /** The caller's instance; an instance API key reaches only its own. */
  const owned = (principal: Principal, id: number) => {
    const instance = market.instances.find(principal.user.id, id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    if (principal.key.instanceId !== undefined && principal.key.instanceId !== id) {
      throw forbidden("permission_denied", "An instance API key may only start, stop or destroy its own instance.");
    }
    return instance;
  };
  const created = ({ instance, apiKey }: { instance: { id: number }; apiKey: string }) => ({
    success: true,
    new_contract: instance.id,
    instance_api_key: apiKey,
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/asks/:offer_id/",
    rateLimit: "instance_create",
    refusals: ["not_found", "gone"],
    rules: CREATION_RULES,
    response: CreateInstanceResponse,
    permission: "instance_write",
    body: AcceptedCreate,
    handler: ({ principal, body, params }) => created(market.acceptOffer(principal, idParam(params, "offer_id"), body)),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/launch_instance/",
    rateLimit: "instance_create",
    refusals: ["not_found", "gone"],
    rules: CREATION_RULES,
    response: CreateInstanceResponse,
    permission: "instance_write",
    body: LaunchRequest,
    handler: ({ principal, body }) => {
      const { q, ...request } = body;
      return created(market.launch(principal, q, request));
    },
  });

  // Retired by the live service (2026-08-20): its deprecation body, unless the old answer is asked for.
  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/",
    response: InstanceListResponse,
    refusals: ["gone"],
    permission: "instance_read",
    handler: ({ principal }) => {
      if (!options.legacyInstanceListing) {
        const { error, msg } = deprecationBody("/api/v0/instances/");
        throw new ServiceError("gone", error, msg);
      }
      const instances = market.instances.list(principal.user.id).map(view);
      return { instances_found: instances.length, instances };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v1/instances/",
    query: InstancePageQuery,
    response: InstancePage,
    permission: "instance_read",
    rules: `select_filters on a field the listing computes (${COMPUTED_INSTANCE_FIELDS.join(", ")}) rather than stores`,
    handler: ({ principal, query }) => {
      const computed = Object.entries(query.select_filters ?? {}).filter(([field, filter]) => filter != null && COMPUTED_INSTANCE_FIELDS.includes(field));
      if (computed.length) {
        const fields = computed.map(([field]) => field).join(", ");
        throw badRequest("invalid_args", `select_filters cannot filter on ${fields}: computed, not a stored column of the listing. Filter the rows it returns instead.`);
      }
      const rows = market.instances.list(principal.user.id).map(view);
      const order = (query.order_by ?? []).map(({ col, dir }) => [col, dir] as [string, "asc" | "desc"]);
      const matching = search(rows, { filters: query.select_filters ?? {}, order: order.length ? order : [["id", "asc"]], limit: rows.length }, INSTANCE_FIELDS, {
        defaultLimit: rows.length,
        maxLimit: rows.length,
      });
      const page = pageOf(matching, query.after_token, Math.min(query.limit ?? INSTANCE_PAGE, INSTANCE_PAGE));
      const labelCounts: Record<string, number> = {};
      for (const row of matching) labelCounts[String(row.label ?? "")] = (labelCounts[String(row.label ?? "")] ?? 0) + 1;
      return {
        success: true,
        instances_found: page.rows.length,
        total_instances: matching.length,
        next_token: page.next_token,
        label_counts: labelCounts,
        instances: page.rows,
      };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/filters/",
    response: z.looseObject({ filters: z.array(z.looseObject({ actual_status: z.string().nullable(), verification: z.string().nullable(), gpu_name: z.string().nullable() })) }),
    permission: "instance_read",
    handler: ({ principal }) => {
      // The distinct combinations of what the listing can be filtered by, among the caller's instances.
      const combos = new Map<string, { actual_status: unknown; verification: unknown; gpu_name: unknown }>();
      for (const row of market.instances.list(principal.user.id).map(view)) {
        const combo = { actual_status: row.actual_status, verification: row.verification, gpu_name: row.gpu_name };
        combos.set(JSON.stringify(combo), combo);
      }
      return { filters: [...combos.values()] };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/:id/",
    missingIsNull: true,
    response: InstanceResponse,
    permission: "instance_read",
    handler: ({ principal, params }) => {
      const instance = market.instances.find(principal.user.id, idParam(params, "id"));
      return { instances: instance ? view(instance) : null };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/:id/",
    refusals: ["not_found"],
    rules: "starting an instance that failed (exited, unknown, offline)",
    response: SuccessResponse,
    permission: "instance_write",
    instanceKey: true,
    body: UpdateInstanceRequest,
    handler: ({ principal, params, body }) => {
      const instance = owned(principal, idParam(params, "id"));
      if (principal.key.instanceId !== undefined && body.label !== undefined) {
        throw forbidden("permission_denied", "An instance API key may start or stop its instance, not relabel it.");
      }
      market.instances.update(instance, body);
      return { success: true };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/bid_price/:id/",
    refusals: ["not_found"],
    rules: "a bid below 0.001 $/hour, or on an on-demand instance",
    response: SuccessResponse,
    permission: "instance_write",
    body: ChangeBidRequest,
    handler: ({ principal, params, body }) => {
      market.instances.changeBid(owned(principal, idParam(params, "id")), body.price);
      return { success: true };
    },
  });

  // Reboot and recycle: the vendor answers an id that is not one of yours with a 400, each its own code and text.
  for (const [how, error, message] of [
    ["reboot", "invalid_args", "invalid instance_id"],
    ["recycle", "invalid_id", "Invalid instance id."],
  ] as const) {
    route(app, market, {
      method: "PUT",
      url: `/api/v0/instances/${how}/:id/`,
      rules: `an id that is not one of the account's instances, or ${how === "reboot" ? "rebooting" : "recycling"} one that is not running`,
      response: SuccessResponse,
      permission: "instance_write",
      body: RestartRequest,
      handler: ({ principal, params }) => {
        const instance = market.instances.find(principal.user.id, idParam(params, "id"));
        if (!instance) throw badRequest(error, message);
        market.instances.restart(instance, how === "reboot" ? "rebooting" : "recycling");
        return { success: true };
      },
    });
  }

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/instances/:id/",
    refusals: ["not_found"],
    response: SuccessResponse,
    permission: "instance_write",
    instanceKey: true,
    handler: ({ principal, params }) => {
      market.instances.destroy(owned(principal, idParam(params, "id")));
      return { success: true };
    },
  });
}
