package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"golang.org/x/mod/modfile"
)

// golang builds Go programs with the machine's Go and runs the binary, the engine's address and the stack's
// settings in the PULUMI_* variables that github.com/pulumi/pulumi/sdk/v3/go/pulumi reads.
type golang struct{}

// localVersion is the version a go.mod requires a module at that a replace directive points to a folder.
const localVersion = "v0.0.0-00010101000000-000000000000"

func (golang) run(ctx context.Context, req *pulumirpc.RunRequest, p runParams) *pulumirpc.RunResponse {
	info := req.GetInfo()
	binary, err := stringOption(info, "binary")
	if err != nil {
		return failed("%v", err)
	}
	if binary == "" {
		if binary, err = buildGo(ctx, info); err != nil {
			return failed("%v", err)
		}
		defer os.Remove(binary)
	} else if binary, err = exec.LookPath(binary); err != nil {
		return failed("runtime option binary in Pulumi.yaml: %v", err)
	}
	env := append(os.Environ(), configEnv(req)...)
	set := func(name, value string) {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	set(pulumi.EnvOrganization, req.GetOrganization())
	set(pulumi.EnvProject, req.GetProject())
	set(pulumi.EnvPulumiRootDirectory, info.GetRootDirectory())
	set(pulumi.EnvStack, req.GetStack())
	set(pulumi.EnvDryRun, strconv.FormatBool(req.GetDryRun()))
	set(pulumi.EnvParallel, strconv.Itoa(int(req.GetParallel())))
	set(pulumi.EnvMonitor, req.GetMonitorAddress())
	set(pulumi.EnvEngine, p.engine)
	return outcome(program(ctx, req.GetPwd(), env, binary, req.GetArgs()...).Run())
}

// buildGo builds the program (into buildTarget when Pulumi.yaml names one, else a temporary file), the compiler's
// messages going to the engine; the error says what to do.
func buildGo(ctx context.Context, info *pulumirpc.ProgramInfo) (string, error) {
	dir := programDir(info)
	goBin, err := lookPath("go", "Go programs need Go on PATH")
	if err != nil {
		return "", err
	}
	if findUp(dir, "go.mod") == "" {
		return "", fmt.Errorf("the Go program in %s has no go.mod: run `go mod init <module>` and `pulumi install` there", dir)
	}
	out, err := stringOption(info, "buildTarget")
	if err != nil {
		return "", err
	}
	if out == "" {
		file, err := os.CreateTemp("", "pulumi-go-program-*")
		if err != nil {
			return "", err
		}
		file.Close()
		out = file.Name()
	} else if !filepath.IsAbs(out) {
		out = filepath.Join(info.GetRootDirectory(), out)
	}
	build := exec.CommandContext(ctx, goBin, "build", "-o", out, ".")
	build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.Remove(out)
		return "", fmt.Errorf("the Go program in %s does not build (go build's errors are above): fix them; "+
			"if a module or go.sum entry is missing, run `pulumi install` (go mod tidy) there", dir)
	}
	return out, nil
}

// packages are the plugins the packages the program imports declare: the pulumi-plugin.json in a package's folder
// (where Pulumi's Go SDKs have it), else at its module's root.
func (golang) packages(ctx context.Context, info *pulumirpc.ProgramInfo) ([]*pulumirpc.PackageDependency, error) {
	dir := programDir(info)
	if findUp(dir, "go.mod") == "" {
		return nil, nil // Run says what is missing
	}
	list := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.Dir}}\t{{with .Module}}{{.Dir}}\t{{.Version}}{{end}}", ".")
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		// A program that does not list does not build either: Run reports that, with the compiler's words.
		return nil, nil
	}
	var found []*pulumirpc.PackageDependency
	seen := map[string]bool{}
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		fields := strings.Split(scanner.Text(), "\t")
		if len(fields) < 3 {
			continue // the standard library
		}
		for _, candidate := range []string{fields[0], fields[1]} {
			file := filepath.Join(candidate, "pulumi-plugin.json")
			if seen[file] {
				continue
			}
			seen[file] = true
			if dep := pluginDeclaration(file, fields[2]); dep != nil {
				found = append(found, dep)
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

func (golang) dependencies(ctx context.Context, info *pulumirpc.ProgramInfo, transitive bool) ([]*pulumirpc.DependencyInfo, error) {
	_, mod, err := goMod(programDir(info))
	if err != nil {
		return nil, err
	}
	replaced := map[string]bool{}
	for _, r := range mod.Replace {
		replaced[r.Old.Path] = true
	}
	var deps []*pulumirpc.DependencyInfo
	for _, r := range mod.Require {
		if r.Indirect && !transitive {
			continue
		}
		version := r.Mod.Version
		if replaced[r.Mod.Path] {
			version = "" // a local folder has no version
		}
		deps = append(deps, &pulumirpc.DependencyInfo{Name: r.Mod.Path, Version: version})
	}
	return deps, nil
}

func (golang) about(ctx context.Context, info *pulumirpc.ProgramInfo) (*pulumirpc.AboutResponse, error) {
	return toolVersion(ctx, "go", "version")
}

func (golang) generatePackage(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
	if len(req.GetExtraFiles()) > 0 {
		return nil, fmt.Errorf("extra files (overlays) are not supported for Go SDKs")
	}
	return codegen.GeneratePackage("pulumi-language-go", pkg, req.GetLocalDependencies())
}

func (golang) generateProgram(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return codegen.GenerateProgram(program)
}

func (golang) bindOptions() []pcl.BindOption { return nil }

// link makes the program's go.mod use each SDK from its folder (a replace directive, and a require of it); the
// engine then asks install for it (go mod tidy).
func (golang) link(ctx context.Context, info *pulumirpc.ProgramInfo, sdks []generatedSDK) (string, error) {
	file, mod, err := goMod(programDir(info))
	if err != nil {
		return "", err
	}
	var imports strings.Builder
	for _, sdk := range sdks {
		folder := filepath.Join(info.GetRootDirectory(), sdk.path)
		_, sdkMod, err := goMod(folder)
		if err != nil {
			return "", fmt.Errorf("the generated Go SDK in %s: %w", folder, err)
		}
		target := "./" + filepath.ToSlash(relativeTo(filepath.Dir(file), folder))
		if err := mod.AddReplace(sdkMod.Module.Mod.Path, "", target, ""); err != nil {
			return "", err
		}
		if err := mod.AddRequire(sdkMod.Module.Mod.Path, localVersion); err != nil {
			return "", err
		}
		fmt.Fprintf(&imports, "  import %q\n", goImportPath(sdk.pkg))
	}
	mod.Cleanup()
	text, err := mod.Format()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(file, text, 0o644); err != nil {
		return "", err
	}
	return "You can import the SDK in your Go code with:\n\n" + imports.String(), nil
}

// goImportPath is the import path of a package's Go SDK.
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
