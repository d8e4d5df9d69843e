import { z } from "zod";
import { FieldFilter } from "./filters";
import { VolumeInfo } from "./instances";
import { atLeastOneOf } from "./required";

/** Template runtypes (the spec's template table); the direct variants are the `ssh_direct`/`jup_direct` flags. */
export const TemplateRuntype = z.enum(["ssh", "jupyter", "args"]);
export type TemplateRuntype = z.infer<typeof TemplateRuntype>;

/** The content of a template: every field a client may set. Required ones are enforced by CreateTemplateRequest. */
const templateContent = {
  name: z.string().min(1),
  image: z.string().min(1),
  tag: z.string().min(1),
  desc: z.string(),
  readme: z.string(),
  env: z.string(),
  onstart: z.string(),
  runtype: TemplateRuntype,
  args_str: z.string(),
  ssh_direct: z.boolean(),
  use_ssh: z.boolean(),
  jup_direct: z.boolean(),
  jupyter_dir: z.string().nullable(),
  use_jupyter_lab: z.boolean(),
  docker_login_repo: z.string(),
  docker_login_user: z.string(),
  docker_login_pass: z.string(),
  href: z.string(),
  repo: z.string(),
  extra_filters: z.record(z.string(), z.unknown()),
  recommended_disk_space: z.number().positive(),
  private: z.boolean(),
  volume_info: VolumeInfo.partial().nullable(),
};

const REQUIRED = ["name", "image", "docker_login_repo", "docker_login_user", "docker_login_pass"] as const;

/** `POST /api/v0/template/`: `name`, `image` and the three `docker_login_*` (empty strings when not needed). */
export const CreateTemplateRequest = z
  .object(templateContent)
  .partial()
  .required(Object.fromEntries(REQUIRED.map((k) => [k, true])) as { [K in (typeof REQUIRED)[number]]: true })
  .strict();
export type CreateTemplateRequest = z.infer<typeof CreateTemplateRequest>;

/** `PUT /api/v0/template/`: the template's `hash_id` and only the fields to change. */
export const EditTemplateRequest = z
  .object({ hash_id: z.string().min(1), ...templateContent })
  .partial()
  .required({ hash_id: true })
  .strict();
export type EditTemplateRequest = z.infer<typeof EditTemplateRequest>;

/** `DELETE /api/v0/template/`: by numeric `template_id` (the spec), or by `hash_id` (some clients). */
export const DeleteTemplateRequest = atLeastOneOf(
  z.object({ template_id: z.number().int().nonnegative().optional(), hash_id: z.string().min(1).optional() }).strict(),
  ["template_id", "hash_id"],
  "template_id (the template's numeric id) or hash_id is required",
);
export type DeleteTemplateRequest = z.infer<typeof DeleteTemplateRequest>;

/** `select_filters` once decoded: `{<search field>: {<operator>: <value>}}`. */
export const TemplateFilters = z.record(z.string(), FieldFilter);
export type TemplateFilters = z.infer<typeof TemplateFilters>;

/**
 * A template as the service returns it. The spec lists the content fields, not the answer's record: only `id`
 * and `hash_id` are required (the SDK deletes by `id`, edits and creates instances by `hash_id`); the rest is
 * what the emulator sends, optional (and nullable) so a live answer with other fields still parses.
 * `docker_login_pass` is shown to its creator only.
 */
export const Template = z.looseObject({
  id: z.number().int(),
  hash_id: z.string(),
  creator_id: z.number().int().nullable().optional(),
  created_at: z.number().nullable().optional(),
  count_created: z.number().int().nullable().optional(),
  recent_create_date: z.number().nullable().optional(),
  recommended: z.boolean().nullable().optional(),
  default_tag: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  image: z.string().nullable().optional(),
  tag: z.string().nullable().optional(),
  runtype: z.string().nullable().optional(),
  recommended_disk_space: z.number().nullable().optional(),
  private: z.boolean().nullable().optional(),
  env: z.string().nullable().optional(),
  onstart: z.string().nullable().optional(),
  args_str: z.string().nullable().optional(),
  ssh_direct: z.boolean().nullable().optional(),
  use_ssh: z.boolean().nullable().optional(),
  jup_direct: z.boolean().nullable().optional(),
  jupyter_dir: z.string().nullable().optional(),
  use_jupyter_lab: z.boolean().nullable().optional(),
  docker_login_repo: z.string().nullable().optional(),
  docker_login_user: z.string().nullable().optional(),
  docker_login_pass: z.string().nullable().optional(),
  extra_filters: z.record(z.string(), z.unknown()).nullable().optional(),
  volume_info: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type Template = z.infer<typeof Template>;

export const TemplateSearchResponse = z.looseObject({ templates: z.array(Template) });
/** POST and PUT: `{success, template}` (the emulator); only the template is read. */
export const TemplateResponse = z.looseObject({ template: Template });

/**
 * The defaults of the spec's template table (`tag` latest, `runtype` args, `recommended_disk_space` 8) and empty
 * values for the rest: what the service stores for a field not given. The emulator applies them; the Template
 * resource compares with them, so writing a default explicitly is not a change.
 */
export const TEMPLATE_DEFAULTS = {
  tag: "latest",
  desc: "",
  readme: "",
  env: "",
  onstart: "",
  runtype: "args" as TemplateRuntype,
  args_str: "",
  ssh_direct: false,
  use_ssh: false,
  jup_direct: false,
  jupyter_dir: null as string | null,
  use_jupyter_lab: false,
  docker_login_repo: "",
  docker_login_user: "",
  docker_login_pass: "",
  href: "",
  repo: "",
  extra_filters: {} as Record<string, unknown>,
  recommended_disk_space: 8,
  private: false,
  volume_info: null as Record<string, unknown> | null,
};
