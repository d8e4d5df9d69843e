package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/shlex"
	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/cgstrings"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// nodejs runs TypeScript and JavaScript programs with the runner that ships in the program's own @pulumi/pulumi
// (cmd/run: it connects to the engine, registers ts-node for TypeScript, and loads the program).
type nodejs struct{}

const nodeRunner = "@pulumi/pulumi/cmd/run/index.js"

func (nodejs) run(ctx context.Context, req *pulumirpc.RunRequest, p runParams) *pulumirpc.RunResponse {
	info := req.GetInfo()
	dir := programDir(info)
	node, err := lookPath("node", "Node.js programs need node on PATH (Node 20 or later)")
	if err != nil {
		return failed("%v", err)
	}
	runner := findUp(dir, filepath.Join("node_modules", filepath.FromSlash(nodeRunner)))
	if runner == "" {
		return failed("@pulumi/pulumi is not installed for the program in %s: run `npm install` there (or `pulumi install`)", dir)
	}
	opts, err := nodeOptions(info)
	if err != nil {
		return failed("%v", err)
	}
	args := append(opts.nodeArgs, runner)
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", p.engine)
	flag("organization", req.GetOrganization())
	flag("project", req.GetProject())
	flag("root-directory", info.GetRootDirectory())
	flag("stack", req.GetStack())
	flag("pwd", dir)
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flag("parallel", strconv.Itoa(int(req.GetParallel())))
	flag("tracing", p.tracing)
	// The runner stops reading flags at the first positional: the entry point, then the program's own arguments.
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(append(args, entry), req.GetArgs()...)

	env := append(os.Environ(), configEnv(req)...)
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	return outcome(program(ctx, dir, env, node, args...).Run())
}

type nodeRuntimeOptions struct {
	typescript     bool
	tsconfig       string
	nodeArgs       []string
	packagemanager npm.PackageManagerType
}

// nodeOptions are the runtime options Pulumi.yaml gives a Node.js program: typescript (default true), tsconfig,
// nodeargs, packagemanager.
func nodeOptions(info *pulumirpc.ProgramInfo) (nodeRuntimeOptions, error) {
	opts := nodeRuntimeOptions{typescript: true, packagemanager: npm.AutoPackageManager}
	if value, ok := options(info)["typescript"]; ok {
		b, ok := value.(bool)
		if !ok {
			return opts, fmt.Errorf("runtime option typescript in Pulumi.yaml must be true or false, not %v", value)
		}
		opts.typescript = b
	}
	var err error
	if opts.tsconfig, err = stringOption(info, "tsconfig"); err != nil {
		return opts, err
	}
	nodeArgs, err := stringOption(info, "nodeargs")
	if err != nil {
		return opts, err
	}
	if opts.nodeArgs, err = shlex.Split(nodeArgs); err != nil {
		return opts, fmt.Errorf("runtime option nodeargs in Pulumi.yaml: %w", err)
	}
	manager, err := stringOption(info, "packagemanager")
	if manager != "" {
		opts.packagemanager = npm.PackageManagerType(manager)
	}
	return opts, err
}

// packages are the plugins the packages in the program's node_modules declare (their pulumi-plugin.json, or the
// `pulumi` field of their package.json: {"resource": true, "name", "version", "server"}), nested ones included.
func (nodejs) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	modules := findUp(programDir(info), "node_modules")
	if modules == "" {
		return nil, nil
	}
	var found []*pulumirpc.PackageDependency
	visited := map[string]bool{}
	var walk func(modules string)
	walk = func(modules string) {
		entries, _ := os.ReadDir(modules)
		for _, entry := range entries {
			dir := filepath.Join(modules, entry.Name())
			if strings.HasPrefix(entry.Name(), "@") {
				walk(dir) // a scope holds packages
				continue
			}
			real, err := filepath.EvalSymlinks(dir)
			if err != nil || visited[real] || strings.HasPrefix(entry.Name(), ".") {
				continue
			}
			visited[real] = true
			if dep := npmPluginDeclaration(real); dep != nil {
				found = append(found, dep)
			}
			walk(filepath.Join(real, "node_modules"))
		}
	}
	walk(modules)
	return uniquePackages(found), nil
}

func npmPluginDeclaration(dir string) *pulumirpc.PackageDependency {
	var manifest struct {
		Name    string                   `json:"name"`
		Version string                   `json:"version"`
		Pulumi  *plugin.PulumiPluginJSON `json:"pulumi"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(data, &manifest) != nil {
		return nil
	}
	if dep := pluginDeclaration(filepath.Join(dir, "pulumi-plugin.json"), manifest.Version); dep != nil {
		return dep
	}
	if manifest.Pulumi == nil || !manifest.Pulumi.Resource {
		return nil
	}
	if manifest.Pulumi.Name == "" {
		// Pulumi's own packages name their plugin after themselves (@pulumi/command: command).
		manifest.Pulumi.Name = strings.TrimPrefix(manifest.Name, "@pulumi/")
	}
	return dependency(manifest.Pulumi, manifest.Version)
}

func (nodejs) install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error {
	opts, err := nodeOptions(info)
	if err != nil {
		return err
	}
	name, err := npm.Install(ctx, opts.packagemanager, programDir(info), false, stdout, stderr)
	if err != nil {
		return fmt.Errorf("%s install failed in %s: %w", name, programDir(info), err)
	}
	return nil
}

func (nodejs) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	opts, err := nodeOptions(info)
	if err != nil {
		return nil, err
	}
	manager, err := npm.ResolvePackageManager(opts.packagemanager, programDir(info))
	if err != nil {
		return nil, err
	}
	deps, err := manager.ListPackages(ctx, programDir(info), transitive)
	return dependencyInfos(deps), err
}

func (nodejs) about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error) {
	about, err := toolVersion(ctx, "node", "--version")
	if err != nil {
		return nil, err
	}
	about.Version = strings.TrimPrefix(about.Version, "v")
	return about, nil
}

func (nodejs) generatePackage(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
	return codegen.GeneratePackage("pulumi-language-nodejs", pkg, req.GetExtraFiles(), req.GetLocalDependencies(), req.GetLocal(), loader)
}

func (nodejs) generateProgram(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return codegen.GenerateProgramWithOptions(program, codegen.ProgramOptions{Runtime: "nodejs"})
}

func (nodejs) bindOptions() []pcl.BindOption {
	return []pcl.BindOption{pcl.PreferOutputVersionedInvokes}
}

// link adds each SDK to the program's package.json as a local (file:) dependency, with its package manager; the
// engine then asks install for it.
func (nodejs) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	opts, err := nodeOptions(info)
	if err != nil {
		return "", err
	}
	dir := programDir(info)
	manager, err := npm.ResolvePackageManager(opts.packagemanager, dir)
	if err != nil {
		return "", err
	}
	typescript := opts.typescript || opts.tsconfig != "" || findUp(dir, "tsconfig.json") != ""
	var imports strings.Builder
	for _, sdk := range sdks {
		name := npmName(sdk.pkg)
		if err := manager.Link(ctx, dir, name, sdk.path); err != nil {
			return "", err
		}
		if typescript {
			fmt.Fprintf(&imports, "  import * as %s from %q;\n", cgstrings.Camel(sdk.pkg.Name), name)
		} else {
			fmt.Fprintf(&imports, "  const %s = require(%q);\n", cgstrings.Camel(sdk.pkg.Name), name)
		}
	}
	language := map[bool]string{true: "TypeScript", false: "JavaScript"}[typescript]
	return fmt.Sprintf("You can import the SDK in your %s code with:\n\n%s", language, imports.String()), nil
}

// npmName is the package name of a package's Node.js SDK: the schema's own, else @<namespace>/<name>, else
// @pulumi/<name>.
func npmName(pkg *schema.Package) string {
	if err := pkg.ImportLanguages(map[string]schema.Language{"nodejs": codegen.Importer}); err == nil {
		if info, ok := pkg.Language["nodejs"].(codegen.NodePackageInfo); ok && info.PackageName != "" {
			return info.PackageName
		}
	}
	if pkg.Namespace != "" {
		return "@" + pkg.Namespace + "/" + pkg.Name
	}
	return "@pulumi/" + pkg.Name
}

// findUp is `name` in dir or the nearest folder above it that has one, as Node resolves node_modules; "" if none.
func findUp(dir, name string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if candidate := filepath.Join(d, name); exists(candidate) {
			return candidate
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
