import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  CreateTemplateRequest,
  DeleteTemplateRequest,
  EditTemplateRequest,
  SuccessResponse,
  TemplateResponse,
  TemplateSearchResponse,
  typedFilters,
} from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { TEMPLATE_FIELDS } from "../domain/templates";
import { accepting, jsonEncoded } from "./accepting";
import { templateView } from "./views/templates";
import { route } from "./routes";

/**
 * `select_filters`: JSON-encoded `{field: {op: value}}` over the template search fields (others are ignored);
 * empty is no filter. (`select_cols`, which the public Python client sends too, is ignored: all columns come.)
 */
const TemplateSearch = z.object({
  select_filters: jsonEncoded(z.object(typedFilters(TEMPLATE_FIELDS)).catchall(z.unknown()), {}).optional(),
});

/**
 * Creation as the service takes it: the spec asks for the three `docker_login_*` (empty strings when not
 * needed), but the public Python client leaves them out or sends null, and the service takes that as empty.
 */
const AcceptedCreate = accepting(CreateTemplateRequest, { optional: ["docker_login_repo", "docker_login_user", "docker_login_pass"] });

/** `PUT /api/v1/template/` (the public Python client's edit): the v0 edit, naming the template by `id` too. */
const EditByIdRequest = accepting(EditTemplateRequest, { fields: { id: z.number().int().nonnegative().optional() } });

/** The rule the schema of a template cannot state: its `env` is docker flags the service can read. */
const ENV_RULE = "an env flag string with an unbalanced quote, a flag without its value, or -e/-p values that are not NAME=value or host:container";

/** `/api/v0/template/`: search (GET), create (POST), edit (PUT, also `/api/v1/template/`), delete (DELETE). */
export function registerTemplates(app: FastifyInstance, market: Marketplace): void {
  const { templates } = market;

  route(app, market, {
    method: "GET",
    url: "/api/v0/template/",
    permission: "user_read",
    query: TemplateSearch,
    response: TemplateSearchResponse,
    handler: ({ principal, query }) => {
      const found = templates.search(principal.user.id, query.select_filters ?? {}).map((t) => templateView(t, principal.user.id));
      return { success: true, templates_found: found.length, templates: found };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/template/",
    permission: "user_write",
    rules: ENV_RULE,
    body: AcceptedCreate,
    response: TemplateResponse,
    handler: ({ principal, body }) => ({ success: true, template: templateView(templates.create(principal.user.id, body), principal.user.id) }),
  });

  for (const url of ["/api/v0/template/", "/api/v1/template/"]) {
    route(app, market, {
      method: "PUT",
      url,
      permission: "user_write",
      refusals: ["not_found"],
      rules: `${ENV_RULE}; duplicate_template for an edit onto the content of another template`,
      body: EditByIdRequest,
      response: TemplateResponse,
      handler: ({ principal, body }) => ({ success: true, template: templateView(templates.edit(principal.user.id, body), principal.user.id) }),
    });
  }

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/template/",
    permission: "user_write",
    refusals: ["not_found"],
    body: DeleteTemplateRequest,
    response: SuccessResponse,
    handler: ({ principal, body }) => {
      const removed = templates.remove(principal.user.id, body);
      return { success: true, msg: `Template ${removed.id} deleted.` };
    },
  });
}
