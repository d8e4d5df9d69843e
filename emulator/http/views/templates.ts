import { filterFields } from "../../domain/templates";
import type { TemplateRecord } from "../../domain/records";

/** The template as the wire shows it; registry credentials are shown to the creator only. */
export function templateView(template: TemplateRecord, viewerId: number): Record<string, unknown> {
  const { docker_login_pass, ...content } = template.content;
  return {
    ...filterFields(template),
    ...content,
    ...(template.creator_id === viewerId ? { docker_login_pass } : {}),
  };
}
