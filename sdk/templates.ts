import type { GpuRentalClient } from "./client";
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
export async function searchTemplates(client: GpuRentalClient, filters: TemplateFilters = {}): Promise<Template[]> {
  const query = Object.keys(filters).length ? `?select_filters=${encodeURIComponent(JSON.stringify(filters))}` : "";
  const res = await client.call({ method: "GET", path: `/api/v0/template/${query}`, schema: TemplateSearchResponse });
  return res.templates;
}

/** Your template (or a public one) with this numeric id, or null. */
export async function getTemplate(client: GpuRentalClient, id: number): Promise<Template | null> {
  const [template] = await searchTemplates(client, { id: { eq: id } });
  return template ?? null;
}

/** Creates a template. Not resent after a lost answer: the spec does not promise that a repeat is harmless. */
export async function createTemplate(client: GpuRentalClient, template: CreateTemplateRequest): Promise<Template> {
  const res = await client.call({ method: "POST", path: "/api/v0/template/", body: template, schema: TemplateResponse, idempotent: false });
  return res.template;
}

/**
 * Changes only the fields given; returns the template with its new `hash_id`. Not resent after a lost answer:
 * the edit would have changed the hash the repeat names.
 */
export async function editTemplate(
  client: GpuRentalClient,
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
export async function deleteTemplate(client: GpuRentalClient, by: { id: number } | { hashId: string }): Promise<void> {
  const body = "id" in by ? { template_id: by.id } : { hash_id: by.hashId };
  await client.call({ method: "DELETE", path: "/api/v0/template/", body, schema: SuccessResponse });
}
