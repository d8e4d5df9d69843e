package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/shlex"
	"github.com/hashicorp/hcl/v2"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// nodejs runs TypeScript and JavaScript programs with the program runner that ships in the program's own
// @pulumi/pulumi (cmd/run: it connects to the engine, compiles TypeScript with ts-node, and loads the program).
type nodejs struct{}

// nodeRunner is the runner's script, found in the node_modules the program resolves its packages from.
var nodeRunner = filepath.Join("node_modules", "@pulumi", "pulumi", "cmd", "run", "index.js")

// nodeHandover: the runner takes the settings as --name=value flags before the program's path.
var nodeHandover = handover{
	names: map[setting]string{
		monitorAddress: "monitor", engineAddress: "engine", organization: "organization", project: "project",
		stack: "stack", rootDirectory: "root-directory", preview: "dry-run", parallelism: "parallel", tracingURL: "tracing",
	},
	write: func(name, value string) string { return "--" + name + "=" + value },
}

// packageManagers are the values runtime.options.packagemanager takes (auto: the one whose lock file is there).
var packageManagers = []string{string(npm.AutoPackageManager), string(npm.NpmPackageManager), string(npm.YarnPackageManager), string(npm.PnpmPackageManager), string(npm.BunPackageManager)}

// nodeSettings are a Node.js program's runtime options.
type nodeSettings struct {
	typescript bool     // typescript: compile .ts with ts-node (default true)
	tsconfig   string   // tsconfig: the tsconfig.json to compile with
	nodeArgs   []string // nodeargs: flags for node itself, as a shell would split them
	manager    npm.PackageManagerType
}

func nodeSettingsOf(info *pulumirpc.ProgramInfo) (nodeSettings, error) {
	o := optionsOf(info)
	var s nodeSettings
	var err error
	if s.typescript, err = o.flag("typescript", true); err != nil {
		return s, err
	}
	if s.tsconfig, err = o.text("tsconfig"); err != nil {
		return s, err
	}
	args, err := o.text("nodeargs")
	if err != nil {
		return s, err
	}
	if s.nodeArgs, err = shlex.Split(args); err != nil {
		return s, fmt.Errorf("runtime.options.nodeargs in Pulumi.yaml: %w", err)
	}
	manager, err := o.choice("packagemanager", string(npm.AutoPackageManager), packageManagers...)
	s.manager = npm.PackageManagerType(manager)
	return s, err
}

// runnerEnv is what the runner reads of the runtime options from its environment.
func (s nodeSettings) runnerEnv() []string {
	env := []string{fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%t", s.typescript)}
	if s.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+s.tsconfig)
	}
	return env
}

func (nodejs) run(ctx context.Context, l launch, info *pulumirpc.ProgramInfo) *pulumirpc.RunResponse {
	settings, err := nodeSettingsOf(info)
	if err != nil {
		return refusal("%v", err)
	}
	node, err := onPath("node", "a Node.js program needs node (20 or later) on PATH")
	if err != nil {
		return refusal("%v", err)
	}
	runner := findUp(l.dir, nodeRunner)
	if runner == "" {
		return refusal("@pulumi/pulumi is not installed for the program in %s: run `npm install` (or `pulumi install`) there", l.dir)
	}
	env := append(append(os.Environ(), l.configEnv()...), settings.runnerEnv()...)
	return runProgram(ctx, command(l.dir, env, node, nodeArgv(l, settings, runner)...))
}

// nodeArgv is node's arguments: [nodeargs] runner --settings... --pwd=dir entry args... (the runner reads its
// flags up to the entry point; what follows is the program's).
func nodeArgv(l launch, settings nodeSettings, runner string) []string {
	argv := append(append([]string{}, settings.nodeArgs...), runner)
	argv = append(argv, l.form(nodeHandover)...)
	argv = append(argv, "--pwd="+l.dir, l.entry)
	return append(argv, l.args...)
}

// packages are the plugins that the packages installed for the program declare (in pulumi-plugin.json, or in
// the `pulumi` field of package.json), packages nested in others' node_modules included.
func (nodejs) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	top := findUp(programDir(info), "node_modules")
	if top == "" {
		return nil, nil
	}
	var found []*pulumirpc.PackageDependency
	read := map[string]bool{} // package folders, by real path (links to one folder count once)
	for queue := []string{top}; len(queue) > 0; queue = queue[1:] {
		for _, pkg := range packageFolders(queue[0]) {
			real, err := filepath.EvalSymlinks(pkg)
			if err != nil || read[real] {
				continue
			}
			read[real] = true
			if dep := npmDeclaredPlugin(real); dep != nil {
				found = append(found, dep)
			}
			queue = append(queue, filepath.Join(real, "node_modules"))
		}
	}
	return uniquePackages(found), nil
}

// packageFolders are the package folders in a node_modules folder, scoped ones (@scope/name) included.
func packageFolders(modules string) []string {
	var folders []string
	entries, _ := os.ReadDir(modules)
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, "."):
		case strings.HasPrefix(name, "@"):
			scoped, _ := os.ReadDir(filepath.Join(modules, name))
			for _, s := range scoped {
				folders = append(folders, filepath.Join(modules, name, s.Name()))
			}
		default:
			folders = append(folders, filepath.Join(modules, name))
		}
	}
	return folders
}

// npmDeclaredPlugin is the plugin an npm package declares, or nil.
func npmDeclaredPlugin(dir string) *pulumirpc.PackageDependency {
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
	declared := manifest.Pulumi
	if declared == nil || !declared.Resource {
		return nil
	}
	if declared.Name == "" {
		declared.Name = path.Base(manifest.Name) // a package that names no plugin uses its own name, less its scope
	}
	return dependency(declared, manifest.Version)
}

func (nodejs) install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error {
	settings, err := nodeSettingsOf(info)
	if err != nil {
		return err
	}
	used, err := npm.Install(ctx, settings.manager, programDir(info), false, stdout, stderr)
	if err != nil {
		return fmt.Errorf("installing the program's packages in %s with %s failed: %w", programDir(info), used, err)
	}
	return nil
}

func (nodejs) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	settings, err := nodeSettingsOf(info)
	if err != nil {
		return nil, err
	}
	manager, err := npm.ResolvePackageManager(settings.manager, programDir(info))
	if err != nil {
		return nil, err
	}
	listed, err := manager.ListPackages(ctx, programDir(info), transitive)
	return dependencyInfos(listed), err
}

func (nodejs) about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error) {
	return aboutTool(ctx, "node", "--version")
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

// link makes each generated SDK a local dependency of the program (the package manager records it; the engine
// asks install next) under the name its own package.json gives.
func (nodejs) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	settings, err := nodeSettingsOf(info)
	if err != nil {
		return "", err
	}
	dir := programDir(info)
	manager, err := npm.ResolvePackageManager(settings.manager, dir)
	if err != nil {
		return "", err
	}
	style := requireStyle
	if settings.typescript && (settings.tsconfig != "" || findUp(dir, "tsconfig.json") != "" || exists(filepath.Join(dir, "index.ts"))) {
		style = importStyle
	}
	var uses []string
	for _, sdk := range sdks {
		name, err := npmPackageName(filepath.Join(info.GetRootDirectory(), sdk.path))
		if err != nil {
			return "", err
		}
		if err := manager.Link(ctx, dir, name, sdk.path); err != nil {
			return "", err
		}
		uses = append(uses, style.line(identifier(sdk.pkg.Name), name))
	}
	return style.usage(uses), nil
}

// npmPackageName is the name a generated SDK's package.json gives it: what the program then requires.
func npmPackageName(dir string) (string, error) {
	var manifest struct {
		Name string `json:"name"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &manifest)
	}
	if err != nil || manifest.Name == "" {
		return "", fmt.Errorf("the generated SDK in %s has no package.json naming it: %v", dir, err)
	}
	return manifest.Name, nil
}
