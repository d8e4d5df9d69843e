import * as fs from "node:fs";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../sdk/package-root";

/** The generator's line that reads the SDK's own version with `parver`, a package pulumi does not bring. */
const PARVER_IMPORT = "from parver import Version as PEP440Version";
/** Our module in its place: the same reading, with `packaging`, which pulumi itself requires. */
const PEP440_MODULE = "_pep440.py";
const PEP440_IMPORT = "from ._pep440 import Version as PEP440Version";
/** Requirements the generator adds that pulumi already brings (semver) or that the module above replaces (parver). */
const DROPPED = /^(parver|semver)\b/;

const PEP440_SOURCE = `"""The parts of a PEP 440 version _utilities reads, from packaging (which pulumi itself requires)."""
from packaging.version import Version as _Version


class Version:
    def __init__(self, text: str):
        version = _Version(text)
        self.release = (tuple(version.release) + (0, 0, 0))[:3]
        self.pre_tag, self.pre = version.pre if version.pre else (None, None)
        self.dev = version.dev
        self.local = version.local

    @classmethod
    def parse(cls, text: str) -> "Version":
        return cls(text)
`;

/**
 * Makes the Python SDK Pulumi's generator wrote in `sdkDir` pull only `pulumi` from PyPI: its version is read
 * by a module of ours instead of `parver`, and the requirements pulumi already covers are dropped. Throws when
 * the generator's output is not what this expects (a newer generator), rather than ship a wheel that fails.
 */
export function onlyPulumiFromPyPI(sdkDir: string, packageName = "pulumi_gpu_rental"): void {
  const utilities = path.join(sdkDir, packageName, "_utilities.py");
  const source = fs.readFileSync(utilities, "utf8");
  if (!source.includes(PARVER_IMPORT)) throw new Error(`${utilities} no longer reads its version with parver: check onlyPulumiFromPyPI against the generator`);
  fs.writeFileSync(utilities, source.replace(PARVER_IMPORT, PEP440_IMPORT));
  fs.writeFileSync(path.join(sdkDir, packageName, PEP440_MODULE), PEP440_SOURCE);

  const pyproject = path.join(sdkDir, "pyproject.toml");
  const toml = fs.readFileSync(pyproject, "utf8");
  const line = /^(\s*dependencies = )(\[.*\])$/m.exec(toml);
  if (!line) throw new Error(`${pyproject} has no dependencies line: check onlyPulumiFromPyPI against the generator`);
  // A TOML array of basic strings on one line reads as JSON.
  const kept = (JSON.parse(line[2]) as string[]).filter((requirement) => !DROPPED.test(requirement));
  fs.writeFileSync(pyproject, toml.replace(line[0], `${line[1]}[${kept.map((r) => JSON.stringify(r)).join(", ")}]`));
}

/** The command's module in the SDK (./command.py, copied as it is) and its console script, as pyproject declares it. */
const COMMAND_MODULE = "_command.py";
const COMMAND_SCRIPT = `[project.scripts]\n    gpu-rental = "pulumi_gpu_rental._command:main"`;

/**
 * Gives the Python SDK Pulumi's generator wrote in `sdkDir` the `gpu-rental` command (./command.py says how it runs
 * the release's executable): `pip install` of the wheel puts it on PATH, so a Python team needs no Node.js for the
 * emulator, `gpu-rental test`, `sweep` or `spend`.
 */
export function withCommand(sdkDir: string, packageName = "pulumi_gpu_rental"): void {
  fs.copyFileSync(path.join(PACKAGE_ROOT, "release", "command.py"), path.join(sdkDir, packageName, COMMAND_MODULE));
  const pyproject = path.join(sdkDir, "pyproject.toml");
  const toml = fs.readFileSync(pyproject, "utf8");
  if (!/^\[build-system\]$/m.test(toml) || toml.includes("[project.scripts]")) throw new Error(`${pyproject} is not as withCommand expects (a [build-system] table, no [project.scripts]): check it against the generator`);
  fs.writeFileSync(pyproject, toml.replace(/^\[build-system\]$/m, `  ${COMMAND_SCRIPT}\n\n[build-system]`));
}
