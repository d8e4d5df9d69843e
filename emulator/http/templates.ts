import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  CreateTemplateRequest,
  DeleteTemplateRequest,
  EditTemplateRequest,
  SuccessResponse,
  TemplateFilters,
  TemplateResponse,
  TemplateSearchQuery,
  TemplateSearchResponse,
} from "../../sdk/schemas";
import { describeIssues } from "../../sdk/schemas";
import { badRequest } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** `/api/v0/template/`: search (GET), create (POST), edit (PUT), delete (DELETE). */
export function registerTemplates(app: FastifyInstance, market: Marketplace): void {
  const { templates } = market;

  route(app, market, {
    method: "GET",
    url: "/api/v0/template/",
    permission: "user_read",
    query: TemplateSearchQuery,
    response: TemplateSearchResponse,
    handler: ({ principal, query }) => {
      const filters = selectFilters(query.select_filters);
      return { templates: templates.search(principal.user.id, filters).map((t) => templates.view(t, principal.user.id)) };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/template/",
    permission: "user_write",
    body: CreateTemplateRequest,
    response: TemplateResponse,
    handler: ({ principal, body }) => ({ success: true, template: templates.view(templates.create(principal.user.id, body), principal.user.id) }),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/template/",
    permission: "user_write",
    body: EditTemplateRequest,
    response: TemplateResponse,
    handler: ({ principal, body }) => ({ success: true, template: templates.view(templates.edit(principal.user.id, body), principal.user.id) }),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/template/",
    permission: "user_write",
    body: DeleteTemplateRequest,
    response: SuccessResponse,
    handler: ({ principal, body }) => {
      templates.remove(principal.user.id, body);
      return { success: true };
    },
  });
}

/** Decodes `select_filters`, a JSON-encoded `{field: {op: value}}`; absent means every visible template. */
function selectFilters(raw: string | undefined): TemplateFilters {
  if (raw === undefined || raw.trim() === "") return {};
  let decoded: unknown;
  try {
    decoded = JSON.parse(raw);
  } catch (error) {
    throw badRequest("invalid_args", `select_filters is not valid JSON (${(error as Error).message}): send a JSON-encoded object such as {"name":{"eq":"PyTorch"}}.`);
  }
  const parsed = TemplateFilters.safeParse(decoded);
  if (!parsed.success) throw badRequest("invalid_args", `select_filters: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
