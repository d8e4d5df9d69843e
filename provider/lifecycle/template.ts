import { z } from "zod";
import { deletedOrGone, EditTemplateRequest, GpuRentalClient, GpuRentalError, NotFoundError, OfferFiltersInput, Template, TEMPLATE_DEFAULTS } from "../../sdk";
import { describeResource } from "./describe";
import type { NamedType, PropertyMeta } from "./description";
import type { Kind, Operation, Props } from "./kind";
import { changedKeys, definedOnly, sameValue, SpecOf, specOf, withDefault } from "./spec";

/**
 * The Template kind: a stored template of the service. Its numeric `id` is the resource's id (it never changes);
 * its `hash_id` derives from its content, so it is an output that changes on every edit.
 */

const DESCRIPTION =
  "A stored template. Every field changes in place (`PUT /api/v0/template/`): the template keeps its numeric id (the " +
  "resource's id) and gets a new `hashId`, so instances created from `hashId` follow the edit.";

const TEMPLATE_RUNTYPE: NamedType = {
  name: "TemplateRuntype",
  description: "How instances of a template are launched.",
  values: { ssh: "Reached over SSH.", jupyter: "Reached through Jupyter.", args: "The image's own entrypoint, with `argsStr` as its arguments." },
};

/** Each input: the template field it stands for (the spec's template table, in camelCase), and what it is. */
const INPUTS = {
  name: { field: "name", description: "The template's name." },
  image: { field: "image", description: "The container image." },
  tag: { field: "tag", default: TEMPLATE_DEFAULTS.tag, description: "Image tag." },
  desc: { field: "desc", description: "A description." },
  readme: { field: "readme", description: "A readme (Markdown)." },
  env: { field: "env", description: "Docker flags, e.g. `-e VAR=value -p 8080:8080`." },
  onstart: { field: "onstart", description: "A script run when an instance starts." },
  runtype: { field: "runtype", named: TEMPLATE_RUNTYPE, tsType: "TemplateRuntype", default: TEMPLATE_DEFAULTS.runtype, description: "`ssh`, `jupyter` or `args`." },
  argsStr: { field: "args_str", description: "Arguments of the image's entrypoint (runtype `args`)." },
  sshDirect: { field: "ssh_direct", description: "SSH straight to the machine's port." },
  useSsh: { field: "use_ssh", description: "Launch with SSH." },
  jupDirect: { field: "jup_direct", description: "Jupyter straight on the machine's port." },
  jupyterDir: { field: "jupyter_dir", description: "The folder Jupyter opens in." },
  useJupyterLab: { field: "use_jupyter_lab", description: "Jupyter Lab rather than the classic notebook." },
  dockerLoginRepo: { field: "docker_login_repo", description: "The private registry of the image." },
  dockerLoginUser: { field: "docker_login_user", description: "The registry's user." },
  dockerLoginPass: { field: "docker_login_pass", secret: true, description: "The registry's access token: always kept secret, in inputs and outputs." },
  href: { field: "href", description: "A link shown with the template." },
  repo: { field: "repo", description: "The image's repository." },
  extraFilters: { field: "extra_filters", tsType: "Record<string, unknown>", description: "Default machine search filters, same shape as offer-search filters." },
  recommendedDiskSpace: { field: "recommended_disk_space", default: TEMPLATE_DEFAULTS.recommended_disk_space, description: "GB." },
  private: { field: "private", description: "Visible to its owner only." },
} as const satisfies Record<string, PropertyMeta & { field: keyof EditTemplateRequest }>;

/** Each input's template field. */
const WIRE_FIELDS = Object.fromEntries(Object.entries(INPUTS).map(([input, { field }]) => [input, field])) as { [K in TemplateInput]: (typeof INPUTS)[K]["field"] };

type TemplateInput = keyof typeof INPUTS;

export type TemplateSpec = { [K in TemplateInput]?: EditTemplateRequest[(typeof WIRE_FIELDS)[K]] } & { name: string; image: string };

/**
 * Validated as the service validates the fields (the wire schema of an edit), `name` and `image` required, and
 * `extraFilters` as every declared offer filter is (the search they default ignores fields it does not know).
 * Keys that are not inputs (the engine's `__provider`, outputs of the state) are dropped here.
 */
const TemplateSpec = z
  .object(
    Object.fromEntries(
      Object.entries(INPUTS).map(([input, { field, ...meta }]) => [input, (input === "extraFilters" ? OfferFiltersInput.optional() : EditTemplateRequest.shape[field]).meta(meta)]),
    ),
  )
  .required({ name: true, image: true });
const SPEC = specOf("Template", TemplateSpec) as unknown as SpecOf<TemplateSpec>;
const TEMPLATE_INPUTS = SPEC.keys as TemplateInput[];

/** The service's defaults (sdk/schemas/templates.ts), by input name. */
const DEFAULTS: Partial<Record<TemplateInput, unknown>> = Object.fromEntries(
  TEMPLATE_INPUTS.map((input) => [input, (TEMPLATE_DEFAULTS as Record<string, unknown>)[WIRE_FIELDS[input]]]),
);

const TemplateOutputs = z.object({
  // The resource's id, used to find and delete the template.
  templateId: z.int().meta({ description: "The template's numeric id (also the resource's id)." }),
  hashId: z.string().meta({ description: "The content hash instances are created from (`templateHashId`); it changes on every edit." }),
});
export type TemplateOutputs = z.infer<typeof TemplateOutputs>;

export interface TemplateDiff {
  changes: boolean;
  /** Every field can change through `PUT /api/v0/template/`: nothing replaces a template. */
  replaces: string[];
  updates: TemplateInput[];
  deleteBeforeReplace: boolean;
}

export const TEMPLATE: Kind<TemplateSpec, TemplateOutputs> = {
  description: describeResource({ name: "Template", description: DESCRIPTION, inputs: SPEC.shape, outputs: TemplateOutputs }),
  spec: SPEC,
  diff: diffTemplateSpec,
  create: createTemplate,
  adopt: adoptTemplate,
  read: readTemplate,
  import: importTemplate,
  update: updateTemplate,
  delete: deleteTemplate,
};

/** Compares the declared template of the state with a new one; defaults written out are not a change. */
export function diffTemplateSpec(olds: Props, news: Props, unknown?: unknown): TemplateDiff {
  const updates = changedKeys(TEMPLATE_INPUTS, olds, news, (key, value) => withDefault(DEFAULTS, key, value), unknown);
  return { changes: updates.length > 0, replaces: [], updates, deleteBeforeReplace: false };
}

/** Creates the template (`POST /api/v0/template/`); the registry fields are required by the service, empty when unused. */
async function createTemplate(spec: TemplateSpec, op: Operation): Promise<{ id: string; outs: TemplateSpec & TemplateOutputs }> {
  const template = await op.client.templates.create({
    ...wireFieldsOf(spec, TEMPLATE_INPUTS),
    name: spec.name,
    image: spec.image,
    docker_login_repo: spec.dockerLoginRepo ?? "",
    docker_login_user: spec.dockerLoginUser ?? "",
    docker_login_pass: spec.dockerLoginPass ?? "",
  });
  return { id: String(template.id), outs: { ...spec, ...outputsOf(template) } };
}

/**
 * Applies the changed fields with one `PUT` to the template's current `hash_id` (looked up by id, so an edit
 * made elsewhere does not make it fail). A field the program no longer sets goes back to its default.
 */
async function updateTemplate(id: string, olds: Props, spec: TemplateSpec, op: Operation): Promise<TemplateSpec & TemplateOutputs> {
  const { updates } = diffTemplateSpec(olds, spec);
  const client = op.client;
  let template = await client.templates.get(Number(id));
  if (!template) throw new GpuRentalError(`Template ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  const withDefaults = Object.fromEntries(updates.map((key) => [key, withDefault(DEFAULTS, key, spec[key])]));
  if (updates.length) template = await client.templates.edit(template.hash_id, wireFieldsOf(withDefaults, updates));
  return { ...spec, ...outputsOf(template) };
}

/**
 * The template as it is now, or null when it is gone (refresh then drops it). Fields changed elsewhere show
 * as changed inputs, so the next `up` puts them back.
 */
async function readTemplate(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & TemplateOutputs) | null> {
  const template = await op.client.templates.get(Number(id));
  return template && { ...props, ...observedSpec(template), ...outputsOf(template) };
}

/**
 * Takes an existing template of the account under management (`adoptId`, its numeric id): the fields the
 * program declares differently are then edited in place, as an update would.
 */
async function adoptTemplate(id: string, spec: TemplateSpec, op: Operation): Promise<{ id: string; outs: TemplateSpec & TemplateOutputs }> {
  const { template, others } = await ownTemplate(op.client, id);
  if (!template) {
    throw new NotFoundError(
      `Template ${id} cannot be adopted: the account has no template with id ${id}${others ? " (it is someone else's public template)" : ""}. ` +
        "Check adoptId (the numeric id, not the hash_id), and the account the resource uses.",
    );
  }
  return { id, outs: await updateTemplate(id, observedSpec(template), spec, op) };
}

/**
 * An existing template of the account as `pulumi import` takes it: the inputs that declare it as it is (fields
 * at their default left out), and its outputs. Null when the account has no such template.
 */
async function importTemplate(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const { template } = await ownTemplate(op.client, id);
  if (!template) return null;
  const observed = observedSpec(template);
  const inputs = Object.fromEntries(
    Object.entries(observed).filter(([key, value]) => value !== null && (key === "name" || key === "image" || !sameValue(value, DEFAULTS[key as TemplateInput]))),
  );
  return { inputs, outs: { ...inputs, ...outputsOf(template) } };
}

/** The template of that id when it is the account's own (a public one of someone else's is `others`). */
async function ownTemplate(client: GpuRentalClient, id: string): Promise<{ template: Template | null; others: boolean }> {
  const template = await client.templates.get(Number(id));
  const mine = template !== null && template.creator_id === (await client.users.current()).id;
  return { template: mine ? template : null, others: template !== null && !mine };
}

/** The inputs as the template has them now. */
function observedSpec(template: Template): Record<string, unknown> {
  return Object.fromEntries(
    TEMPLATE_INPUTS.filter((key) => template[WIRE_FIELDS[key]] !== undefined).map((key) => [key, template[WIRE_FIELDS[key]]]),
  );
}

/** Deletes the template by its numeric id; one already gone counts as deleted. */
async function deleteTemplate(id: string, _props: Props, op: Operation): Promise<void> {
  await deletedOrGone(() => op.client.templates.delete({ id: Number(id) }));
}

function outputsOf(template: Template): TemplateOutputs {
  return { templateId: template.id, hashId: template.hash_id };
}

/** The wire fields of the given inputs, leaving out those not set. */
function wireFieldsOf(values: Readonly<Record<string, unknown>>, keys: readonly TemplateInput[]): Record<string, any> {
  return definedOnly(Object.fromEntries(keys.map((key) => [WIRE_FIELDS[key], values[key]])));
}
