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

// runnerPy runs the program (and lists installed plugins) with the program's Python: see runner.py.
//
//go:embed runner.py
var runnerPy string

// python runs programs with the Python of their virtual environment and the `pulumi` package installed there.
type python struct{}

// defaultVirtualenv is the virtual environment of a program whose Pulumi.yaml names none (pip toolchain).
const defaultVirtualenv = "venv"

// pythonToolchain is the program's Python toolchain as its runtime options say (toolchain: pip, the default,
// poetry or uv; virtualenv: its folder, relative to the project's root, `venv` when not given).
func pythonToolchain(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, toolchain.PythonOptions, error) {
	opts := toolchain.PythonOptions{Root: info.GetRootDirectory(), ProgramDir: programDir(info), Toolchain: toolchain.Pip}
	var err error
	if opts.Virtualenv, err = stringOption(info, "virtualenv"); err != nil {
		return nil, opts, err
	}
	name, err := stringOption(info, "toolchain")
	if err != nil {
		return nil, opts, err
	}
	switch name {
	case "", "pip":
		if opts.Virtualenv == "" {
			opts.Virtualenv = defaultVirtualenv
		}
	case "poetry":
		opts.Toolchain = toolchain.Poetry
	case "uv":
		opts.Toolchain = toolchain.Uv
	default:
		return nil, opts, fmt.Errorf("runtime option toolchain in Pulumi.yaml is %q: use pip, poetry or uv", name)
	}
	tc, err := toolchain.ResolveToolchain(opts)
	return tc, opts, err
}

// venvPython is the program's toolchain and an error that names what to do when its virtual environment is
// missing (a Python program is run in its own environment, never the machine's).
func venvPython(ctx context.Context, info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
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

func (python) run(ctx context.Context, req *pulumirpc.RunRequest, p runParams) *pulumirpc.RunResponse {
	info := req.GetInfo()
	tc, err := venvPython(ctx, info)
	if err != nil {
		return failed("%v", err)
	}
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	settings, _ := json.Marshal(map[string]any{
		"monitor": req.GetMonitorAddress(), "engine": p.engine, "project": req.GetProject(), "stack": req.GetStack(),
		"parallel": req.GetParallel(), "dryRun": req.GetDryRun(), "organization": req.GetOrganization(),
		"rootDirectory": info.GetRootDirectory(), "root": info.GetRootDirectory(), "pwd": programDir(info),
		"program": filepath.Join(programDir(info), entry), "args": append([]string{}, req.GetArgs()...),
	})
	cmd, err := tc.Command(ctx, "-u", "-c", runnerPy, "run", string(settings))
	if err != nil {
		return failed("%v", err)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	return outcome(program(ctx, programDir(info), append(env, configEnv(req)...), cmd.Path, cmd.Args[1:]...).Run())
}

// packages are the plugins that the distributions installed in the program's environment declare.
func (python) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	tc, err := venvPython(ctx, info)
	if err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, "-c", runnerPy, "plugins")
	if err != nil {
		return nil, err
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the plugins installed in the program's environment: %w", err)
	}
	var files []struct{ File, Version string }
	if err := json.Unmarshal(out, &files); err != nil {
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

// install makes the program's virtual environment if it has none and installs requirements.txt into it (pip);
// poetry and uv install as they do.
func (python) install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error {
	tc, opts, err := pythonToolchain(info)
	if err != nil {
		return err
	}
	if opts.Toolchain != toolchain.Pip {
		return tc.InstallDependencies(ctx, programDir(info), false, true, stdout, stderr)
	}
	venv, _ := tc.VirtualEnvPath(ctx)
	if !toolchain.IsVirtualEnv(venv) {
		fmt.Fprintf(stdout, "Creating the virtual environment %s\n", venv)
		cmd, err := toolchain.Command(ctx, "-m", "venv", venv)
		if err != nil {
			return fmt.Errorf("Python 3 with venv is needed for Python programs: %w", err)
		}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("creating the virtual environment %s failed (on Debian: apt-get install python3-venv): %w", venv, err)
		}
	}
	if !exists(filepath.Join(programDir(info), "requirements.txt")) {
		return nil
	}
	cmd, err := tc.ModuleCommand(ctx, "pip", "install", "--disable-pip-version-check", "-r", "requirements.txt")
	if err != nil {
		return err
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = programDir(info), stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pip install -r requirements.txt failed in %s (see above): %w", programDir(info), err)
	}
	return nil
}

func (python) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	tc, err := venvPython(ctx, info)
	if err != nil {
		return nil, err
	}
	deps, err := tc.ListPackages(ctx, transitive)
	return dependencyInfos(deps), err
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

// link adds each SDK's folder to the program's requirements (requirements.txt, or pyproject.toml for poetry and
// uv); the engine then asks install for it.
func (python) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	tc, _, err := pythonToolchain(info)
	if err != nil {
		return "", err
	}
	packages := map[string]string{}
	var imports strings.Builder
	for _, sdk := range sdks {
		name := strings.ReplaceAll(sdk.pkg.Name, "-", "_")
		module := "pulumi_" + name
		if err := sdk.pkg.ImportLanguages(map[string]schema.Language{"python": codegen.Importer}); err == nil {
			if pi, ok := sdk.pkg.Language["python"].(codegen.PackageInfo); ok && pi.PackageName != "" {
				module = pi.PackageName
			}
		}
		packages[module] = sdk.path
		fmt.Fprintf(&imports, "  import %s as %s\n", module, name)
	}
	if err := tc.LinkPackages(ctx, packages); err != nil {
		return "", fmt.Errorf("adding the SDK to the program's requirements: %w", err)
	}
	return "You can import the SDK in your Python code with:\n\n" + imports.String(), nil
}
