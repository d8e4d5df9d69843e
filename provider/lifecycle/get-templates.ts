import { z } from "zod";
import { GpuRentalError, Template, TemplateFilters } from "../../sdk";
import type { ObjectDescription } from "./description";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getTemplates function: the templates the account can see (public ones and its own), by search or by name. Read-only. */

const TEMPLATE_SUMMARY: ObjectDescription = {
  name: "TemplateSummary",
  description: "A template the account can see.",
  properties: {
    id: { type: "integer", description: "The template's numeric id." },
    hashId: { type: "string", description: "Its content hash: what an Instance's or a GpuFleet's `templateHashId` takes." },
    name: { type: "string", nullable: true, description: "Its name." },
    image: { type: "string", nullable: true, description: "Its container image." },
    tag: { type: "string", nullable: true, description: "The image's tag." },
  },
  required: ["id", "hashId"],
};

const GetTemplatesArgs = z
  .object({
    filters: TemplateFilters.optional(),
    name: z.string().min(1).optional(),
  })
  .refine((a) => a.filters === undefined || a.name === undefined || a.filters.name === undefined, {
    message: "give the name once: as name, or as a name filter",
    path: ["name"],
  });
type GetTemplatesArgs = z.infer<typeof GetTemplatesArgs>;

export interface TemplateSummary {
  id: number;
  hashId: string;
  name: string | null;
  image: string | null;
  tag: string | null;
}

export const GET_TEMPLATES: LookupFunction<GetTemplatesArgs, { templates: TemplateSummary[] }> = {
  description: {
    name: "getTemplates",
    description:
      "The templates the account can see (public ones and its own) that match a search in the operators of the offer search " +
      "(`filters`, the service's `select_filters` over template fields such as name, image, tag, recommended, creator_id), or by " +
      "`name`. An Instance made from one takes its `hashId`.",
    inputs: {
      filters: {
        type: "map",
        values: { type: "any" },
        tsType: "TemplateFilters",
        description: '`{ <field>: { <operator>: <value> } }` over the template fields, e.g. `{ image: { eq: "pytorch/pytorch" }, recommended: { eq: true } }`.',
      },
      name: { type: "string", description: "Only templates of this name (a `name` filter)." },
    },
    outputs: { templates: { type: "array", items: { type: "object", object: TEMPLATE_SUMMARY }, description: "The templates found." } },
    requiredOutputs: ["templates"],
    example: { args: { name: "pytorch-worker" }, exports: "templates[0].hashId" },
  },
  args: specOf("getTemplates", GetTemplatesArgs),
  async invoke(args, op) {
    const filters: TemplateFilters = { ...args.filters, ...(args.name !== undefined && { name: { eq: args.name } }) };
    const found = await op.client.templates.search(filters).catch((error) => {
      // The service checks the fields it filters on; its refusal names the argument the program wrote.
      throw error instanceof GpuRentalError && error.status === 400 ? new GpuRentalError(`Invalid getTemplates: filters: ${error.message}`) : error;
    });
    return { templates: found.map(summaryOf) };
  },
};

function summaryOf(template: Template): TemplateSummary {
  return { id: template.id, hashId: template.hash_id, name: template.name ?? null, image: template.image ?? null, tag: template.tag ?? null };
}
