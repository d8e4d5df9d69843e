import { adoptApiKey, checkApiKeyInputs, importApiKey, createApiKeyFromSpec, deleteApiKeyById, diffApiKeySpec, readApiKeyState } from "./api-key";
import {
  adoptInstance,
  importInstance,
  checkInstanceInputs,
  createInstanceFromSpec,
  instanceWarnings,
  destroyInstanceById,
  diffInstance,
  readInstanceState,
  updateInstanceFromSpec,
} from "./instance";
import { adoptFleet, checkFleetInputs, createFleetFromSpec, deleteFleet, diffFleet, fleetWarnings, importFleet, readFleetState, updateFleetFromSpec } from "./fleet";
import { managed } from "./managed";
import {
  adoptNetworkVolume,
  importNetworkVolume,
  checkNetworkVolumeInputs,
  createNetworkVolumeFromSpec,
  deleteNetworkVolumeById,
  diffNetworkVolumeSpec,
  readNetworkVolumeState,
  updateNetworkVolumeFromSpec,
} from "./network-volume";
import {
  adoptTemplate,
  importTemplate,
  checkTemplateInputs,
  createTemplateFromSpec,
  deleteTemplateById,
  diffTemplateSpec,
  readTemplateState,
  updateTemplateFromSpec,
} from "./template";

export type { Imported, ResourceFunctions } from "./managed";

/** Every resource kind of the provider package, by its Pulumi type name. */
export const RESOURCE_FUNCTIONS = {
  Instance: managed("Instance", {
    check: checkInstanceInputs,
    diff: diffInstance,
    create: createInstanceFromSpec,
    adopt: adoptInstance,
    read: readInstanceState,
    import: importInstance,
    update: updateInstanceFromSpec,
    delete: destroyInstanceById,
    warnings: instanceWarnings,
  }),
  Template: managed("Template", {
    check: checkTemplateInputs,
    diff: diffTemplateSpec,
    create: createTemplateFromSpec,
    adopt: adoptTemplate,
    read: readTemplateState,
    import: importTemplate,
    update: updateTemplateFromSpec,
    delete: deleteTemplateById,
  }),
  NetworkVolume: managed("NetworkVolume", {
    check: checkNetworkVolumeInputs,
    diff: diffNetworkVolumeSpec,
    create: createNetworkVolumeFromSpec,
    adopt: adoptNetworkVolume,
    read: readNetworkVolumeState,
    import: importNetworkVolume,
    update: updateNetworkVolumeFromSpec,
    delete: deleteNetworkVolumeById,
  }),
  ApiKey: managed("ApiKey", {
    check: checkApiKeyInputs,
    diff: diffApiKeySpec,
    create: createApiKeyFromSpec,
    adopt: adoptApiKey,
    read: readApiKeyState,
    import: importApiKey,
    delete: deleteApiKeyById,
  }),
  /** `size` instances of one spec as one resource: see sdk/resources/fleet.ts for its inputs and outputs. */
  GpuFleet: managed("GpuFleet", {
    check: checkFleetInputs,
    diff: diffFleet,
    create: createFleetFromSpec,
    adopt: adoptFleet,
    read: readFleetState,
    import: importFleet,
    update: updateFleetFromSpec,
    delete: deleteFleet,
    warnings: fleetWarnings,
  }),
};

export type ResourceKind = keyof typeof RESOURCE_FUNCTIONS;

/** The engine's marker for a value not known yet (preview): the provider passes it on to `check` and `diff`. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
