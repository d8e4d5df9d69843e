import { checkApiKeyInputs, createApiKeyFromSpec, deleteApiKeyById, diffApiKeySpec, readApiKeyState } from "./api-key";
import { checkInstanceInputs, createInstanceFromSpec, destroyInstanceById, diffInstanceSpec, readInstanceState, updateInstanceFromSpec } from "./instance";
import {
  checkNetworkVolumeInputs,
  createNetworkVolumeFromSpec,
  deleteNetworkVolumeById,
  diffNetworkVolumeSpec,
  readNetworkVolumeState,
} from "./network-volume";
import { CheckFailure } from "./spec";
import { checkTemplateInputs, createTemplateFromSpec, deleteTemplateById, diffTemplateSpec, readTemplateState, updateTemplateFromSpec } from "./template";

type Props = Readonly<Record<string, any>>;

/** The SDK functions behind one Pulumi resource kind: the provider host calls them, one per provider method. */
export interface ResourceFunctions {
  check(news: Record<string, unknown>, unknown?: unknown): { inputs: Record<string, unknown>; failures: CheckFailure[] };
  diff(olds: Props, news: Props, unknown?: unknown): { changes: boolean; replaces: string[]; deleteBeforeReplace: boolean };
  create(inputs: unknown): Promise<{ id: string; outs: object }>;
  /** The current outputs, or null when the thing is gone. */
  read(id: string, props: Props): Promise<object | null>;
  /** Absent where every change replaces: the engine never asks for an update then. */
  update?(id: string, olds: Props, news: unknown): Promise<object>;
  delete(id: string): Promise<void>;
}

/** Every resource kind of the provider package, by its Pulumi type name. */
export const RESOURCE_FUNCTIONS = {
  Instance: {
    check: checkInstanceInputs,
    diff: diffInstanceSpec,
    create: createInstanceFromSpec,
    read: readInstanceState,
    update: updateInstanceFromSpec,
    delete: destroyInstanceById,
  },
  Template: {
    check: checkTemplateInputs,
    diff: diffTemplateSpec,
    create: createTemplateFromSpec,
    read: readTemplateState,
    update: updateTemplateFromSpec,
    delete: deleteTemplateById,
  },
  NetworkVolume: {
    check: checkNetworkVolumeInputs,
    diff: diffNetworkVolumeSpec,
    create: createNetworkVolumeFromSpec,
    read: readNetworkVolumeState,
    delete: deleteNetworkVolumeById,
  },
  ApiKey: { check: checkApiKeyInputs, diff: diffApiKeySpec, create: createApiKeyFromSpec, read: readApiKeyState, delete: deleteApiKeyById },
} satisfies Record<string, ResourceFunctions>;

export type ResourceKind = keyof typeof RESOURCE_FUNCTIONS;
