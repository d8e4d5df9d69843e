import { createHash } from "node:crypto";
import {
  canonicalJson,
  CreateInstanceRequest,
  CreateTemplateRequest,
  EditTemplateRequest,
  Runtype,
  TEMPLATE_DEFAULTS,
} from "../../sdk/schemas";
import { envFromFlags } from "./docker-flags";
import { badRequest, forbidden, notFound } from "./errors";
import { FieldType, search } from "./filters";
import { Persistent } from "./persistence";
import type { TemplateContent, TemplateRecord } from "./records";


/** The template search fields of the spec, usable in `select_filters`. */
export const TEMPLATE_FIELDS: Record<string, FieldType> = {
  creator_id: "number", created_at: "number", count_created: "number", id: "number", recent_create_date: "number",
  recommended_disk_space: "number",
  default_tag: "string", docker_login_repo: "string", image: "string", hash_id: "string", name: "string", tag: "string",
  jup_direct: "boolean", recommended: "boolean", ssh_direct: "boolean", use_ssh: "boolean", private: "boolean",
};

/** A creation as the service takes it: the `docker_login_*` fields may be left out (they are then empty). */
export type TemplateCreation = Omit<CreateTemplateRequest, RegistryField> & Partial<Pick<CreateTemplateRequest, RegistryField>>;
type RegistryField = "docker_login_repo" | "docker_login_user" | "docker_login_pass";

/** How a request names a template: its numeric `id`, its `hash_id`, or both (then they must agree). */
export interface TemplateName {
  template_id?: number;
  hash_id?: string;
}

/** Templates of the service itself (creator 0): public and on the recommended list. */
const SEEDED: Array<Partial<TemplateContent> & Pick<TemplateContent, "name" | "image">> = [
  {
    name: "PyTorch (CUDA)", image: "pytorch/pytorch", tag: "2.4.0-cuda12.4-cudnn9-runtime", runtype: "jupyter",
    jup_direct: true, use_ssh: true, ssh_direct: true, use_jupyter_lab: true, jupyter_dir: "/", env: "-p 8080:8080",
    desc: "PyTorch with CUDA and JupyterLab", recommended_disk_space: 32,
  },
  {
    name: "NVIDIA CUDA", image: "nvidia/cuda", tag: "12.4.1-devel-ubuntu22.04", runtype: "ssh", use_ssh: true,
    ssh_direct: true, desc: "CUDA development image with SSH", recommended_disk_space: 16,
  },
  {
    name: "vLLM server", image: "vllm/vllm-openai", tag: "latest", runtype: "args",
    args_str: "--model Qwen/Qwen2.5-0.5B-Instruct --port 8000", env: "-p 8000:8000 -e HF_HOME=/workspace/hf",
    desc: "OpenAI-compatible LLM server", recommended_disk_space: 64, extra_filters: { gpu_ram: { gte: 16000 } },
  },
];

const SERVICE_CREATOR = 0;
const HASH_LENGTH = 32;

export interface TemplatesSnapshot {
  records: TemplateRecord[];
  nextId: number;
}

/** Stored templates: search, create, edit, delete, and their use at instance creation. */
export class Templates implements Persistent<TemplatesSnapshot> {
  private records = new Map<number, TemplateRecord>();
  private nextId = 1;

  constructor(private readonly now: () => number) {
    for (const seeded of SEEDED) {
      const content = withDefaults({ docker_login_repo: "", docker_login_user: "", docker_login_pass: "", ...seeded });
      this.insert(SERVICE_CREATOR, content).recommended = true;
    }
  }

  /** Templates visible to `viewerId` (public ones and its own private ones) that match `select_filters`. */
  search(viewerId: number, filters: Record<string, unknown>): TemplateRecord[] {
    const visible = [...this.records.values()].filter((t) => this.visibleTo(t, viewerId));
    return search(visible, { filters }, TEMPLATE_FIELDS, {
      defaultLimit: 1000,
      maxLimit: 1000,
      filterView: filterFields,
    });
  }

  /**
   * Creates a template. Content is what identifies a template: creating the same content again returns the
   * template that already has it (so a retried create is harmless). The password is not part of the content's
   * identity: the same content with another password is that template, and it takes the password just sent.
   */
  create(creatorId: number, request: TemplateCreation): TemplateRecord {
    const content = withDefaults(request);
    envFromFlags(content.env); // refuses a flag string the service would refuse
    const existing = this.withHash(hashOf(creatorId, content));
    if (!existing) return this.insert(creatorId, content);
    existing.content.docker_login_pass = content.docker_login_pass;
    return existing;
  }

  /**
   * Changes only the fields given; the template gets the `hash_id` of its new content. An edit of the password
   * alone keeps the `hash_id` (the password is not hashed), so clients holding the hash still find the template.
   */
  edit(userId: number, request: EditTemplateRequest & { id?: number }): TemplateRecord {
    const { hash_id, id, ...changes } = request;
    const template = this.owned(userId, this.named(userId, { template_id: id, hash_id }));
    const content = { ...template.content, ...(changes as Partial<TemplateContent>) };
    envFromFlags(content.env); // refuses a flag string the service would refuse
    const hash = hashOf(template.creator_id, content);
    const other = this.withHash(hash);
    if (other && other !== template) {
      throw badRequest("duplicate_template", `Template ${other.id} already has this content (hash ${hash}): use it, or delete one of the two.`);
    }
    template.content = content;
    template.hash_id = hash;
    return template;
  }

  /** Deletes by numeric `template_id` or by `hash_id`; only the creator may. */
  remove(userId: number, by: TemplateName): TemplateRecord {
    const template = this.owned(userId, this.named(userId, by));
    this.records.delete(template.id);
    return template;
  }

  /** The template a creation request names by `template_hash_id`; it must be public or the caller's own. */
  resolve(userId: number, hashId: string): TemplateRecord {
    return this.byHash(userId, hashId);
  }

  /** Counts an instance created from the template (its popularity). */
  recordUse(template: TemplateRecord): void {
    template.count_created++;
    template.recent_create_date = this.now() / 1000;
  }

  snapshot(): TemplatesSnapshot {
    return structuredClone({ records: [...this.records.values()], nextId: this.nextId });
  }

  restore(data: TemplatesSnapshot): void {
    this.records = new Map(structuredClone(data.records).map((t) => [t.id, t]));
    this.nextId = data.nextId;
  }

  private insert(creatorId: number, content: TemplateContent): TemplateRecord {
    const record: TemplateRecord = {
      id: this.nextId++,
      hash_id: hashOf(creatorId, content),
      creator_id: creatorId,
      created_at: this.now() / 1000,
      count_created: 0,
      recent_create_date: null,
      recommended: false,
      content,
    };
    this.records.set(record.id, record);
    return record;
  }

  private visibleTo(template: TemplateRecord, userId: number): boolean {
    return !template.content.private || template.creator_id === userId;
  }

  private withHash(hash: string): TemplateRecord | undefined {
    return [...this.records.values()].find((t) => t.hash_id === hash);
  }

  /** The template a request names; an id and a hash that name two templates name none (404). */
  private named(userId: number, by: TemplateName): TemplateRecord {
    if (by.template_id === undefined) return this.byHash(userId, by.hash_id as string);
    const template = this.byId(userId, by.template_id);
    if (by.hash_id !== undefined && template.hash_id !== by.hash_id) {
      throw notFound(
        "no_such_template",
        `No template has id ${by.template_id} and hash_id ${by.hash_id}: template ${by.template_id} has hash_id ${template.hash_id} (a hash changes on every edit). Send one of them, or both current.`,
      );
    }
    return template;
  }

  private byHash(userId: number, hash: string): TemplateRecord {
    const template = this.withHash(hash);
    if (!template || !this.visibleTo(template, userId)) {
      throw notFound("no_such_template", `No template with hash_id ${hash}. A template's hash_id changes when it is edited: search the templates for the current one.`);
    }
    return template;
  }

  private byId(userId: number, id: number): TemplateRecord {
    const template = this.records.get(id);
    if (!template || !this.visibleTo(template, userId)) {
      throw notFound("no_such_template", `No template with id ${id}. Search the templates for its numeric id.`);
    }
    return template;
  }

  private owned(userId: number, template: TemplateRecord): TemplateRecord {
    if (template.creator_id !== userId) {
      throw forbidden("permission_denied", `Template ${template.id} belongs to another user: only its creator may change or delete it. Create your own copy instead.`);
    }
    return template;
  }
}

function withDefaults(fields: Partial<TemplateContent> & Pick<TemplateContent, "name" | "image">): TemplateContent {
  const given = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return { ...TEMPLATE_DEFAULTS, ...given } as TemplateContent;
}

/** The fields `select_filters` sees, beside the content: identifiers, popularity, and `default_tag`. */
export function filterFields(template: TemplateRecord): Record<string, unknown> {
  const { content } = template;
  return {
    id: template.id,
    hash_id: template.hash_id,
    creator_id: template.creator_id,
    created_at: template.created_at,
    count_created: template.count_created,
    recent_create_date: template.recent_create_date,
    recommended: template.recommended,
    default_tag: content.tag,
    name: content.name,
    image: content.image,
    tag: content.tag,
    docker_login_repo: content.docker_login_repo,
    jup_direct: content.jup_direct,
    ssh_direct: content.ssh_direct,
    use_ssh: content.use_ssh,
    recommended_disk_space: content.recommended_disk_space,
    runtype: content.runtype,
    private: content.private,
  };
}

/**
 * Content-derived `hash_id`: sha256 of the canonical JSON (keys sorted) of the creator and the content. The
 * creator is part of it so two users' identical private templates stay two templates. The registry password is
 * not: the hash of a public template would let anyone test guesses of it offline. It is hashed as the empty
 * string whatever it is, so a template without credentials keeps the hash it had when the password was hashed.
 */
export function hashOf(creatorId: number, content: TemplateContent): string {
  const identity = { creator_id: creatorId, ...content, docker_login_pass: "" };
  return createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, HASH_LENGTH);
}

/** The instance runtype a template's `runtype` and direct flags stand for. */
export function instanceRuntype(content: TemplateContent): Runtype {
  if (content.runtype === "ssh") return content.ssh_direct ? "ssh_direct" : "ssh_proxy";
  if (content.runtype === "jupyter") return content.jup_direct ? "jupyter_direct" : "jupyter_proxy";
  return "args";
}

/** The template's image with its tag, unless the image already names one. */
function imageWithTag(content: TemplateContent): string {
  const lastSegment = content.image.split("/").pop() ?? "";
  return lastSegment.includes(":") || lastSegment.includes("@") ? content.image : `${content.image}:${content.tag}`;
}

const nonEmpty = (value: string | null | undefined) => (value ? value : undefined);

/**
 * The creation request a template stands for, with the request's own fields on top: scalars of the request
 * win; `env` and `extra_filters` merge by key (template keys kept, request wins on conflict); registry
 * credentials carry over as `image_login`. A `volume_info` stored in the template is a UI hint and is dropped.
 */
export function applyTemplate(template: TemplateRecord, request: CreateInstanceRequest): CreateInstanceRequest {
  const t = template.content;
  const runtype = request.runtype ?? instanceRuntype(t);
  const login = t.docker_login_user ? `-u ${t.docker_login_user} -p ${t.docker_login_pass} ${t.docker_login_repo}`.trim() : undefined;
  const merged: CreateInstanceRequest = {
    ...request,
    image: request.image ?? imageWithTag(t),
    runtype,
    disk: request.disk ?? t.recommended_disk_space,
    onstart: request.onstart ?? nonEmpty(t.onstart),
    // The template's command only makes sense for an `args` instance; the request's own is checked as sent.
    args_str: request.args_str ?? (runtype === "args" ? nonEmpty(t.args_str) : undefined),
    jupyter_dir: request.jupyter_dir ?? nonEmpty(t.jupyter_dir),
    use_jupyter_lab: request.use_jupyter_lab ?? (t.use_jupyter_lab || undefined),
    image_login: request.image_login ?? login,
    env: { ...envFromFlags(t.env), ...request.env },
    extra_filters: { ...t.extra_filters, ...request.extra_filters },
  };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as CreateInstanceRequest;
}
