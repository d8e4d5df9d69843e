import { z } from "zod";
import { GpuRentalError, NotFoundError } from "../errors";
import { EditTemplateRequest, Template, TEMPLATE_DEFAULTS } from "../schemas";
import type { GpuRentalClient } from "../client";
import { changedKeys, checkInputs, CheckFailure, clientOf, definedOnly, deletedOrGone, requireSpec, sameValue, WithClient, withDefault } from "./spec";

/**
 * The Pulumi `Template` resource: a stored template of the service. Its numeric `id` is the resource's id (it
 * never changes); its `hash_id` derives from its content, so it is an output that changes on every edit.
 */

/** Each input and the template field it stands for (the spec's template table, in camelCase). */
const WIRE_FIELDS = {
  name: "name",
  image: "image",
  tag: "tag",
  desc: "desc",
  readme: "readme",
  env: "env",
  onstart: "onstart",
  runtype: "runtype",
  argsStr: "args_str",
  sshDirect: "ssh_direct",
  useSsh: "use_ssh",
  jupDirect: "jup_direct",
  jupyterDir: "jupyter_dir",
  useJupyterLab: "use_jupyter_lab",
  dockerLoginRepo: "docker_login_repo",
  dockerLoginUser: "docker_login_user",
  dockerLoginPass: "docker_login_pass",
  href: "href",
  repo: "repo",
  extraFilters: "extra_filters",
  recommendedDiskSpace: "recommended_disk_space",
  private: "private",
} as const satisfies Record<string, keyof EditTemplateRequest>;

type TemplateInput = keyof typeof WIRE_FIELDS;
const TEMPLATE_INPUTS = Object.keys(WIRE_FIELDS) as TemplateInput[];

export type TemplateSpec = { [K in TemplateInput]?: EditTemplateRequest[(typeof WIRE_FIELDS)[K]] } & { name: string; image: string };

/**
 * Validated as the service validates the fields (the wire schema of an edit), `name` and `image` required. Keys
 * that are not inputs (the engine's `__provider`, outputs of the state) are dropped, not refused.
 */
export const TemplateSpec = z
  .object(Object.fromEntries(TEMPLATE_INPUTS.map((input) => [input, EditTemplateRequest.shape[WIRE_FIELDS[input]]])))
  .required({ name: true, image: true }) as unknown as z.ZodType<TemplateSpec>;

/** The service's defaults (sdk/schemas/templates.ts), by input name. */
const DEFAULTS: Partial<Record<TemplateInput, unknown>> = Object.fromEntries(
  TEMPLATE_INPUTS.map((input) => [input, (TEMPLATE_DEFAULTS as Record<string, unknown>)[WIRE_FIELDS[input]]]),
);

export interface TemplateOutputs {
  /** The numeric `id`: the resource's id, used to find and delete the template. */
  templateId: number;
  /** The content hash: what instances are created from (`template_hash_id`); it changes on every edit. */
  hashId: string;
}

export interface TemplateDiff {
  changes: boolean;
  /** Every field can change through `PUT /api/v0/template/`: nothing replaces a template. */
  replaces: string[];
  updates: TemplateInput[];
  deleteBeforeReplace: boolean;
}

/** Compares the declared template of the state with a new one; defaults written out are not a change. */
export function diffTemplateSpec(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown): TemplateDiff {
  const updates = changedKeys(TEMPLATE_INPUTS, olds, news, (key, value) => withDefault(DEFAULTS, key, value), unknown);
  return { changes: updates.length > 0, replaces: [], updates, deleteBeforeReplace: false };
}

/** The provider's `check`. */
export function checkTemplateInputs(news: Record<string, unknown>, unknown?: unknown): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  return checkInputs(TemplateSpec, TEMPLATE_INPUTS, news, unknown);
}

/** Creates the template (`POST /api/v0/template/`); the registry fields are required by the service, empty when unused. */
export async function createTemplateFromSpec(input: unknown, options: WithClient = {}): Promise<{ id: string; outs: TemplateSpec & TemplateOutputs }> {
  const spec = requireSpec("Template", TemplateSpec, input);
  const template = await clientOf(options).templates.create({
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
export async function updateTemplateFromSpec(
  id: string,
  olds: Readonly<Record<string, any>>,
  input: unknown,
  options: WithClient = {},
): Promise<TemplateSpec & TemplateOutputs> {
  const spec = requireSpec("Template", TemplateSpec, input);
  const { updates } = diffTemplateSpec(olds, spec);
  const client = clientOf(options);
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
export async function readTemplateState(
  id: string,
  props: Readonly<Record<string, any>>,
  options: WithClient = {},
): Promise<(Record<string, unknown> & TemplateOutputs) | null> {
  const template = await clientOf(options).templates.get(Number(id));
  return template && { ...props, ...observedSpec(template), ...outputsOf(template) };
}

/**
 * Takes an existing template of the account under management (`adoptId`, its numeric id): the fields the
 * program declares differently are then edited in place, as an update would.
 */
export async function adoptTemplate(id: string, input: unknown, options: WithClient = {}): Promise<{ id: string; outs: TemplateSpec & TemplateOutputs }> {
  const { template, others } = await ownTemplate(clientOf(options), id);
  if (!template) {
    throw new NotFoundError(
      `Template ${id} cannot be adopted: the account has no template with id ${id}${others ? " (it is someone else's public template)" : ""}. ` +
        "Check adoptId (the numeric id, not the hash_id), and the account the resource uses.",
    );
  }
  return { id, outs: await updateTemplateFromSpec(id, observedSpec(template), input, options) };
}

/**
 * An existing template of the account as `pulumi import` takes it: the inputs that declare it as it is (fields
 * at their default left out), and its outputs. Null when the account has no such template.
 */
export async function importTemplate(id: string, options: WithClient = {}): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const { template } = await ownTemplate(clientOf(options), id);
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
export async function deleteTemplateById(id: string, options: WithClient = {}): Promise<void> {
  await deletedOrGone(() => clientOf(options).templates.delete({ id: Number(id) }));
}

function outputsOf(template: Template): TemplateOutputs {
  return { templateId: template.id, hashId: template.hash_id };
}

/** The wire fields of the given inputs, leaving out those not set. */
function wireFieldsOf(values: Readonly<Record<string, unknown>>, keys: readonly TemplateInput[]): Record<string, any> {
  return definedOnly(Object.fromEntries(keys.map((key) => [WIRE_FIELDS[key], values[key]])));
}
