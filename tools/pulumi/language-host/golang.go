package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"golang.org/x/mod/modfile"
)

// golang builds Go programs with the machine's Go and runs the binary; the Go SDK (sdk/v3/go/pulumi) reads its
// settings from environment variables.
type golang struct{}

// goHandover: the settings under the variables the Go SDK reads (it has no tracing of its own).
var goHandover = handover{
	names: map[setting]string{
		monitorAddress: pulumi.EnvMonitor, engineAddress: pulumi.EnvEngine, organization: pulumi.EnvOrganization,
		project: pulumi.EnvProject, stack: pulumi.EnvStack, rootDirectory: pulumi.EnvPulumiRootDirectory,
		preview: pulumi.EnvDryRun, parallelism: pulumi.EnvParallel,
	},
	write: func(name, value string) string { return name + "=" + value },
}

// pseudoVersion is the version a go.mod requires of a module that a replace directive points at a folder.
const pseudoVersion = "v0.0.0-00010101000000-000000000000"

func (golang) run(ctx context.Context, l launch, info *pulumirpc.ProgramInfo) *pulumirpc.RunResponse {
	binary, err := goProgram(ctx, info)
	if err != nil {
		return refusal("%v", err)
	}
	env := append(append(os.Environ(), l.configEnv()...), l.form(goHandover)...)
	return runProgram(ctx, command(l.dir, env, binary, l.args...))
}

// goProgram is the program's executable: runtime.options.binary (prebuilt, on PATH or by path) as it is; else
// built, into runtime.options.buildTarget (kept there, as its owner asked) or into its executable kept in the
// user's cache (gocache.go).
func goProgram(ctx context.Context, info *pulumirpc.ProgramInfo) (string, error) {
	o := optionsOf(info)
	prebuilt, err := o.text("binary")
	if err != nil || prebuilt != "" {
		if err == nil {
			prebuilt, err = exec.LookPath(prebuilt)
		}
		if err != nil {
			return "", fmt.Errorf("runtime.options.binary in Pulumi.yaml: %w", err)
		}
		return prebuilt, nil
	}
	target, err := o.text("buildTarget")
	if err != nil || target == "" {
		if err != nil {
			return "", err
		}
		return keptBuild(ctx, programDir(info))
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(info.GetRootDirectory(), target)
	}
	return target, goBuild(ctx, programDir(info), target)
}

// goBuild compiles the program in dir into out, with env added to the host's, the compiler's messages going to
// the engine's output.
func goBuild(ctx context.Context, dir, out string, env ...string) error {
	goTool, err := onPath("go", "a Go program is built with Go, which is not on PATH")
	if err != nil {
		return err
	}
	if findUp(dir, "go.mod") == "" {
		return fmt.Errorf("the Go program in %s has no go.mod: run `go mod init <module>` and `pulumi install` there", dir)
	}
	// -trimpath: the compiled packages name no folder, so a program (or its generated SDK) copied to another folder,
	// a CI job's checkout, reuses what Go's build cache holds of it instead of compiling it again.
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-o", out, ".")
	build.Dir, build.Env, build.Stdout, build.Stderr = dir, append(os.Environ(), env...), os.Stderr, os.Stderr
	if build.Run() != nil {
		return fmt.Errorf("the Go program in %s does not build (go build's errors are above): fix them; "+
			"if a module or go.sum entry is missing, run `pulumi install` (go mod tidy) there", dir)
	}
	return nil
}

// packages are the plugins that the packages the program imports declare: a pulumi-plugin.json in a package's
// folder (where Pulumi's Go SDKs keep it), or at its module's root.
func (golang) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	dir := programDir(info)
	if findUp(dir, "go.mod") == "" {
		return nil, nil // Run says what is missing
	}
	list := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if .Module}}{{.Dir}}\t{{.Module.Dir}}\t{{.Module.Version}}{{end}}", ".")
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		return nil, nil // a program that does not list does not build either: Run reports it in the compiler's words
	}
	var found []*pulumirpc.PackageDependency
	looked := map[string]bool{}
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		fields := strings.Split(lines.Text(), "\t")
		if len(fields) != 3 {
			continue
		}
		for _, folder := range fields[:2] {
			if file := filepath.Join(folder, "pulumi-plugin.json"); !looked[file] {
				looked[file] = true
				if dep := pluginDeclaration(file, fields[2]); dep != nil {
					found = append(found, dep)
				}
			}
		}
	}
	return uniquePackages(found), nil
}

// install is `go mod tidy`: it downloads what the program imports (its SDKs included) and records it.
func (golang) install(ctx context.Context, info *pulumirpc.ProgramInfo, stdout, stderr io.Writer) error {
	tidy := exec.CommandContext(ctx, "go", "mod", "tidy")
	tidy.Dir, tidy.Stdout, tidy.Stderr = programDir(info), stdout, stderr
	if err := tidy.Run(); err != nil {
		return fmt.Errorf("go mod tidy failed in %s (see above): %w", programDir(info), err)
	}
	return nil
}

// goModule is what `go list -m -json` says of a module.
type goModule struct {
	Path     string
	Version  string
	Main     bool
	Indirect bool
	Replace  *goModule
}

// dependencies are the modules the program builds with, as the go tool resolves them: each at the version it
// is used at (a module replaced by another at that one's version, one replaced by a folder at that folder).
func (golang) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	list := exec.CommandContext(ctx, "go", "list", "-m", "-json", "all")
	list.Dir = programDir(info)
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m all failed in %s: %s", list.Dir, strings.TrimSpace(stderr.String()))
	}
	var deps []*pulumirpc.DependencyInfo
	for decoder := json.NewDecoder(bytes.NewReader(out)); ; {
		var m goModule
		if err := decoder.Decode(&m); errors.Is(err, io.EOF) {
			return deps, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list -m's answer: %w", err)
		}
		if m.Main || (m.Indirect && !transitive) {
			continue
		}
		used := m.Version
		if m.Replace != nil {
			used = m.Replace.Version
			if used == "" {
				used = m.Replace.Path
			}
		}
		deps = append(deps, &pulumirpc.DependencyInfo{Name: m.Path, Version: used})
	}
}

func (golang) about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error) {
	return aboutTool(ctx, "go", "version")
}

func (golang) generatePackage(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
	if len(req.GetExtraFiles()) > 0 {
		return nil, fmt.Errorf("a Go SDK takes no extra files (overlays)")
	}
	return codegen.GeneratePackage("pulumi-language-go", pkg, req.GetLocalDependencies())
}

func (golang) generateProgram(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return codegen.GenerateProgram(program)
}

func (golang) bindOptions() []pcl.BindOption { return nil }

// link points the program's go.mod at each SDK's folder (a require of its module, replaced by the folder); the
// engine then asks install for it (go mod tidy).
func (golang) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	file, mod, err := goMod(programDir(info))
	if err != nil {
		return "", err
	}
	var uses []string
	for _, sdk := range sdks {
		folder := filepath.Join(info.GetRootDirectory(), sdk.path)
		_, sdkMod, err := goMod(folder)
		if err != nil {
			return "", fmt.Errorf("the generated Go SDK in %s: %w", folder, err)
		}
		module := sdkMod.Module.Mod.Path
		if err := mod.AddRequire(module, pseudoVersion); err != nil {
			return "", err
		}
		if err := mod.AddReplace(module, "", "./"+filepath.ToSlash(relativeTo(filepath.Dir(file), folder)), ""); err != nil {
			return "", err
		}
		uses = append(uses, goStyle.line("", goImportPath(sdk.pkg)))
	}
	mod.Cleanup()
	text, err := mod.Format()
	if err == nil {
		err = os.WriteFile(file, text, 0o644)
	}
	if err != nil {
		return "", err
	}
	return goStyle.usage(uses), nil
}

// goImportPath is the import path of a package's Go SDK, as its schema's Go settings give it.
func goImportPath(pkg *schema.Package) string {
	if err := pkg.ImportLanguages(map[string]schema.Language{"go": codegen.Importer}); err == nil {
		if info, ok := pkg.Language["go"].(codegen.GoPackageInfo); ok && info.ImportBasePath != "" {
			return info.ImportBasePath
		}
	}
	return codegen.ExtractImportBasePath(pkg.Reference())
}

// goMod is the go.mod of the module holding dir, parsed.
func goMod(dir string) (string, *modfile.File, error) {
	file := findUp(dir, "go.mod")
	if file == "" {
		return "", nil, fmt.Errorf("no go.mod in %s or above it: run `go mod init <module>` there", dir)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, err
	}
	mod, err := modfile.Parse(file, data, nil)
	return file, mod, err
}
