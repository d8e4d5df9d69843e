import type { Caller } from "./call";
import {
  CreateTemplateRequest,
  EditTemplateRequest,
  SuccessResponse,
  Template,
  TemplateFilters,
  TemplateResponse,
  TemplateSearchResponse,
} from "./schemas";

/**
 * Templates (`/api/v0/template/`). A template's `hash_id` derives from its content: it changes on every edit,
 * so keep the one `editTemplate` returns.
 */

/** Templates you can see (public ones and your private ones) matching `filters` over the template search fields. */
async function searchTemplates(client: Caller, filters: TemplateFilters = {}): Promise<Template[]> {
  const query = Object.keys(filters).length ? `?select_filters=${encodeURIComponent(JSON.stringify(filters))}` : "";
  const res = await client.call({ method: "GET", path: `/api/v0/template/${query}`, schema: TemplateSearchResponse });
  return res.templates;
}

/** Your template (or a public one) with this numeric id, or null. */
async function getTemplate(client: Caller, id: number): Promise<Template | null> {
  const [template] = await searchTemplates(client, { id: { eq: id } });
  return template ?? null;
}

/** Creates a template. Not resent after a lost answer: the spec does not promise that a repeat is harmless. */
async function createTemplate(client: Caller, template: CreateTemplateRequest): Promise<Template> {
  const res = await client.call({ method: "POST", path: "/api/v0/template/", body: template, schema: TemplateResponse, idempotent: false });
  return res.template;
}

/**
 * Changes only the fields given; returns the template with its new `hash_id`. Not resent after a lost answer:
 * the edit would have changed the hash the repeat names.
 */
async function editTemplate(client: Caller,
  hashId: string,
  changes: Omit<EditTemplateRequest, "hash_id">,
): Promise<Template> {
  const res = await client.call({
    method: "PUT",
    path: "/api/v0/template/",
    body: { ...changes, hash_id: hashId },
    schema: TemplateResponse,
    idempotent: false,
  });
  return res.template;
}

/** Deletes a template by its numeric `id` (or, as some clients do, by `hashId`). */
async function deleteTemplate(client: Caller, by: { id: number } | { hashId: string }): Promise<void> {
  const body = "id" in by ? { template_id: by.id } : { hash_id: by.hashId };
  await client.call({ method: "DELETE", path: "/api/v0/template/", body, schema: SuccessResponse });
}

/** `client.templates`: by numeric id (`get`, `delete`) or by content hash (`edit`, `delete({ hashId })`). */
export function templatesApi(client: Caller) {
  return {
    search: (filters?: TemplateFilters) => searchTemplates(client, filters),
    get: (id: number) => getTemplate(client, id),
    create: (template: CreateTemplateRequest) => createTemplate(client, template),
    edit: (hashId: string, changes: Omit<EditTemplateRequest, "hash_id">) => editTemplate(client, hashId, changes),
    delete: (by: number | { id: number } | { hashId: string }) => deleteTemplate(client, typeof by === "number" ? { id: by } : by),
  };
}
