package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// launcherPy starts the program (and lists installed plugins) with the program's own Python: see launcher.py.
//
//go:embed launcher.py
var launcherPy string

// launchVariable carries the launch to launcher.py, which takes it out of the environment the program sees.
const launchVariable = "GPU_RENTAL_PYTHON_LAUNCH"

// python runs programs with the Python of their virtual environment and the `pulumi` package installed there.
type python struct{}

// pythonHandover: the settings under the names of pulumi.runtime.Settings' arguments, which launcher.py passes
// them as (Python's SDK reads tracing from TRACEPARENT in the environment, which the program inherits).
var pythonHandover = handover{names: map[setting]string{
	monitorAddress: "monitor", engineAddress: "engine", organization: "organization", project: "project", stack: "stack",
	rootDirectory: "root_directory", preview: "dry_run", parallelism: "parallel",
}}

// pythonLaunch is what launcher.py reads.
type pythonLaunch struct {
	Settings   map[string]string `json:"settings"`
	Config     map[string]string `json:"config"`
	SecretKeys []string          `json:"secretKeys"`
	Program    string            `json:"program"` // the entry point: a file, or a folder with __main__.py
	Args       []string          `json:"args"`
	Dir        string            `json:"dir"`
	Root       string            `json:"root"` // the project's folder: frames under it (and not in its venv) are the program's own
}

// defaultVirtualenv is the virtual environment of a pip program whose Pulumi.yaml names none.
const defaultVirtualenv = "venv"

// pythonToolchain is the program's Python toolchain as its runtime options say (toolchain: pip, the default,
// poetry or uv; virtualenv: its folder, relative to the project's root).
func pythonToolchain(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, toolchain.PythonOptions, error) {
	o := optionsOf(info)
	opts := toolchain.PythonOptions{Root: info.GetRootDirectory(), ProgramDir: programDir(info)}
	var err error
	if opts.Virtualenv, err = o.text("virtualenv"); err != nil {
		return nil, opts, err
	}
	name, err := o.choice("toolchain", "pip", "pip", "poetry", "uv")
	if err != nil {
		return nil, opts, err
	}
	switch name {
	case "poetry":
		opts.Toolchain = toolchain.Poetry
	case "uv":
		opts.Toolchain = toolchain.Uv
	default:
		opts.Toolchain = toolchain.Pip
	}
	if opts.Toolchain == toolchain.Pip && opts.Virtualenv == "" {
		opts.Virtualenv = defaultVirtualenv
	}
	tc, err := toolchain.ResolveToolchain(opts)
	return tc, opts, err
}

// programPython is the program's toolchain, refusing, with what to do, a pip program whose virtual environment
// is missing (a Python program runs in its own environment, never the machine's).
func programPython(ctx context.Context, info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
	tc, opts, err := pythonToolchain(info)
	if err != nil {
		return nil, err
	}
	if venv, _ := tc.VirtualEnvPath(ctx); opts.Toolchain == toolchain.Pip && !toolchain.IsVirtualEnv(venv) {
		return nil, fmt.Errorf("the Python program in %s has no virtual environment at %s: run `pulumi install` there "+
			"(it makes one and installs requirements.txt into it), or name an existing one as runtime.options.virtualenv in Pulumi.yaml",
			opts.Root, venv)
	}
	return tc, tc.ValidateVenv(ctx)
}

func (python) run(ctx context.Context, l launch, info *pulumirpc.ProgramInfo) *pulumirpc.RunResponse {
	tc, err := programPython(ctx, info)
	if err != nil {
		return refusal("%v", err)
	}
	payload, err := json.Marshal(pythonLaunch{
		Settings: l.named(pythonHandover), Config: l.config, SecretKeys: l.secretKeys,
		Program: filepath.Join(l.dir, l.entry), Args: append([]string{}, l.args...), Dir: l.dir, Root: info.GetRootDirectory(),
	})
	if err != nil {
		return refusal("%v", err)
	}
	python, err := tc.Command(ctx, "-u", "-c", launcherPy, "run")
	if err != nil {
		return refusal("%v", err)
	}
	env := python.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(env, launchVariable+"="+string(payload))
	return runProgram(ctx, command(l.dir, env, python.Path, python.Args[1:]...))
}

// packages are the plugins that the distributions installed in the program's environment declare.
func (python) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	tc, err := programPython(ctx, info)
	if err != nil {
		return nil, err
	}
	list, err := tc.Command(ctx, "-c", launcherPy, "plugins")
	if err != nil {
		return nil, err
	}
	out, err := list.Output()
	var files []struct{ File, Version string }
	if err == nil {
		err = json.Unmarshal(out, &files)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the plugins installed in the program's environment: %w", err)
	}
	var found []*pulumirpc.PackageDependency
	for _, f := range files {
		if dep := pluginDeclaration(f.File, f.Version); dep != nil {
			found = append(found, dep)
		}
	}
	return uniquePackages(found), nil
}

// install makes a pip program's virtual environment when it has none and installs requirements.txt into it;
// poetry and uv install as they do.
func (python) install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error {
	tc, opts, err := pythonToolchain(info)
	if err != nil {
		return err
	}
	if opts.Toolchain != toolchain.Pip {
		return tc.InstallDependencies(ctx, programDir(info), false, true, stdout, stderr)
	}
	if venv, _ := tc.VirtualEnvPath(ctx); !toolchain.IsVirtualEnv(venv) {
		fmt.Fprintf(stdout, "Making the virtual environment %s\n", venv)
		if err := attach("", stdout, stderr)(toolchain.Command(ctx, "-m", "venv", venv)); err != nil {
			return fmt.Errorf("making the virtual environment %s failed (on Debian: apt-get install python3-venv): %w", venv, err)
		}
	}
	if !exists(filepath.Join(programDir(info), "requirements.txt")) {
		return nil
	}
	pip := attach(programDir(info), stdout, stderr)
	if err := pip(tc.ModuleCommand(ctx, "pip", "install", "--disable-pip-version-check", "-r", "requirements.txt")); err != nil {
		return fmt.Errorf("pip install -r requirements.txt failed in %s (see above): %w", programDir(info), err)
	}
	return nil
}

func (python) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	tc, err := programPython(ctx, info)
	if err != nil {
		return nil, err
	}
	listed, err := tc.ListPackages(ctx, transitive)
	return dependencyInfos(listed), err
}

func (python) about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error) {
	tc, _, err := pythonToolchain(info)
	if err != nil {
		return nil, err
	}
	about, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{Executable: about.PythonExecutable, Version: about.PythonVersion.String()}, nil
}

func (python) generatePackage(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
	return codegen.GeneratePackage("pulumi-language-python", pkg, req.GetExtraFiles(), loader)
}

func (python) generateProgram(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return codegen.GenerateProgram(program)
}

func (python) bindOptions() []pcl.BindOption { return nil }

// link adds each SDK's folder to the program's requirements (requirements.txt; pyproject.toml for poetry and
// uv); the engine then asks install for it. An SDK's module is the package folder it was generated with.
func (python) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	tc, _, err := pythonToolchain(info)
	if err != nil {
		return "", err
	}
	linked := map[string]string{}
	var uses []string
	for _, sdk := range sdks {
		module, err := pythonModuleIn(filepath.Join(info.GetRootDirectory(), sdk.path))
		if err != nil {
			return "", err
		}
		linked[module] = sdk.path
		uses = append(uses, pythonStyle.line(strings.ReplaceAll(sdk.pkg.Name, "-", "_"), module))
	}
	if err := tc.LinkPackages(ctx, linked); err != nil {
		return "", fmt.Errorf("adding the SDK to the program's requirements: %w", err)
	}
	return pythonStyle.usage(uses), nil
}

// pythonModuleIn is the importable package a generated Python SDK holds: its one folder with an __init__.py.
func pythonModuleIn(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("the generated Python SDK in %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), "__init__.py")) {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("the generated Python SDK in %s holds no package (no folder with an __init__.py)", dir)
}
