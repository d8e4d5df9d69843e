import { ADOPT_ID, ResourceDescription } from "./description";

/** A stored template: the fields of the service's template table, in camelCase. */
export const TEMPLATE: ResourceDescription = {
  name: "Template",
  description:
    "A stored template. Every field changes in place (`PUT /api/v0/template/`): the template keeps its numeric id (the " +
    "resource's id) and gets a new `hashId`, so instances created from `hashId` follow the edit.",
  inputs: {
    name: { type: "string", description: "The template's name." },
    image: { type: "string", description: "The container image." },
    tag: { type: "string", default: "latest", description: "Image tag." },
    desc: { type: "string", description: "A description." },
    readme: { type: "string", description: "A readme (Markdown)." },
    env: { type: "string", description: "Docker flags, e.g. `-e VAR=value -p 8080:8080`." },
    onstart: { type: "string", description: "A script run when an instance starts." },
    runtype: {
      type: "string",
      enum: {
        name: "TemplateRuntype",
        description: "How instances of a template are launched.",
        values: [
          { value: "ssh", description: "Reached over SSH." },
          { value: "jupyter", description: "Reached through Jupyter." },
          { value: "args", description: "The image's own entrypoint, with `argsStr` as its arguments." },
        ],
      },
      tsType: "TemplateRuntype",
      default: "args",
      description: "`ssh`, `jupyter` or `args`.",
    },
    argsStr: { type: "string", description: "Arguments of the image's entrypoint (runtype `args`)." },
    sshDirect: { type: "boolean", description: "SSH straight to the machine's port." },
    useSsh: { type: "boolean", description: "Launch with SSH." },
    jupDirect: { type: "boolean", description: "Jupyter straight on the machine's port." },
    jupyterDir: { type: "string", description: "The folder Jupyter opens in.", tsType: "string | null" },
    useJupyterLab: { type: "boolean", description: "Jupyter Lab rather than the classic notebook." },
    dockerLoginRepo: { type: "string", description: "The private registry of the image." },
    dockerLoginUser: { type: "string", description: "The registry's user." },
    dockerLoginPass: { type: "string", secret: true, description: "The registry's access token: always kept secret, in inputs and outputs." },
    href: { type: "string", description: "A link shown with the template." },
    repo: { type: "string", description: "The image's repository." },
    extraFilters: {
      type: "map",
      values: { type: "any" },
      tsType: "Record<string, unknown>",
      description: "Default machine search filters, same shape as offer-search filters.",
    },
    recommendedDiskSpace: { type: "number", default: 8, description: "GB." },
    private: { type: "boolean", description: "Visible to its owner only." },
    adoptId: ADOPT_ID,
  },
  requiredInputs: ["name", "image"],
  outputs: {
    templateId: { type: "integer", description: "The template's numeric id (also the resource's id)." },
    hashId: { type: "string", description: "The content hash instances are created from (`templateHashId`); it changes on every edit." },
  },
  requiredOutputs: ["templateId", "hashId"],
};
