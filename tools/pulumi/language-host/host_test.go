package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
)

// request is a RunRequest as the engine sends one for a preview of the stack dev of project gpus, in dir.
func request(dir string) *pulumirpc.RunRequest {
	return &pulumirpc.RunRequest{
		MonitorAddress: "127.0.0.1:7001", Project: "gpus", Stack: "dev", Organization: "acme", DryRun: true, Parallel: 8,
		Config: map[string]string{"gpus:size": "2"}, ConfigSecretKeys: []string{"gpu-rental:apiKey"}, Args: []string{"--fast"},
		Info: &pulumirpc.ProgramInfo{RootDirectory: dir, ProgramDirectory: dir, EntryPoint: "."},
	}
}

func withOptions(info *pulumirpc.ProgramInfo, options map[string]any) *pulumirpc.ProgramInfo {
	s, err := structpb.NewStruct(options)
	if err != nil {
		panic(err)
	}
	info.Options = s
	return info
}

func TestEachRuntimeIsHandedTheSameLaunchInItsOwnForm(t *testing.T) {
	l := launchOf(request("/work/gpus"), "127.0.0.1:7000", "http://traces:4318")

	node := nodeArgv(l, nodeSettings{nodeArgs: []string{"--max-old-space-size=512"}}, "/runner.js")
	wantNode := []string{"--max-old-space-size=512", "/runner.js", "--monitor=127.0.0.1:7001", "--engine=127.0.0.1:7000",
		"--organization=acme", "--project=gpus", "--stack=dev", "--root-directory=/work/gpus", "--dry-run=true", "--parallel=8",
		"--tracing=http://traces:4318", "--pwd=/work/gpus", ".", "--fast"}
	if !reflect.DeepEqual(node, wantNode) {
		t.Errorf("node's arguments:\n got %q\nwant %q", node, wantNode)
	}

	// Go's SDK reads no tracing endpoint: it is left out, not passed under a name nothing reads.
	wantGo := []string{"PULUMI_MONITOR=127.0.0.1:7001", "PULUMI_ENGINE=127.0.0.1:7000", "PULUMI_ORGANIZATION=acme", "PULUMI_PROJECT=gpus",
		"PULUMI_STACK=dev", "PULUMI_ROOT_DIRECTORY=/work/gpus", "PULUMI_DRY_RUN=true", "PULUMI_PARALLEL=8"}
	if got := l.form(goHandover); !reflect.DeepEqual(got, wantGo) {
		t.Errorf("a Go program's environment:\n got %q\nwant %q", got, wantGo)
	}

	wantPython := map[string]string{"monitor": "127.0.0.1:7001", "engine": "127.0.0.1:7000", "organization": "acme", "project": "gpus",
		"stack": "dev", "root_directory": "/work/gpus", "dry_run": "true", "parallel": "8"}
	if got := l.named(pythonHandover); !reflect.DeepEqual(got, wantPython) {
		t.Errorf("pulumi.runtime.Settings' arguments:\n got %v\nwant %v", got, wantPython)
	}

	wantConfig := []string{`PULUMI_CONFIG={"gpus:size":"2"}`, `PULUMI_CONFIG_SECRET_KEYS=["gpu-rental:apiKey"]`}
	if got := l.configEnv(); !reflect.DeepEqual(got, wantConfig) {
		t.Errorf("config: got %q, want %q", got, wantConfig)
	}
}

func TestSettingsTheEngineLeavesOutAreNotHandedOver(t *testing.T) {
	req := request("/p")
	req.Organization, req.Parallel, req.DryRun, req.Config, req.ConfigSecretKeys = "", 0, false, nil, nil
	l := launchOf(req, "", "")
	for _, arg := range l.form(nodeHandover) {
		if strings.HasPrefix(arg, "--organization") || strings.HasPrefix(arg, "--parallel") || strings.HasPrefix(arg, "--engine") || strings.HasPrefix(arg, "--tracing") {
			t.Errorf("handed %s, which the engine did not give", arg)
		}
	}
	if !reflect.DeepEqual(l.form(nodeHandover)[len(l.form(nodeHandover))-1], "--dry-run=false") {
		t.Errorf("an update must say it is not a preview: %q", l.form(nodeHandover))
	}
	if got := l.configEnv(); !reflect.DeepEqual(got, []string{"PULUMI_CONFIG={}", "PULUMI_CONFIG_SECRET_KEYS=[]"}) {
		t.Errorf("no config is an empty object and list, got %q", got)
	}
}

func TestRuntimeOptionsAreCheckedByType(t *testing.T) {
	info := withOptions(&pulumirpc.ProgramInfo{RootDirectory: "/p"}, map[string]any{"packagemanager": "pip"})
	if _, err := nodeSettingsOf(info); err == nil || !strings.Contains(err.Error(), `runtime.options.packagemanager in Pulumi.yaml is "pip": it takes auto, npm, yarn, pnpm, bun`) {
		t.Errorf("an unknown package manager: %v", err)
	}
	info = withOptions(&pulumirpc.ProgramInfo{RootDirectory: "/p"}, map[string]any{"typescript": "yes"})
	if _, err := nodeSettingsOf(info); err == nil || !strings.Contains(err.Error(), "runtime.options.typescript in Pulumi.yaml is yes: it takes true or false") {
		t.Errorf("a typescript option that is not a boolean: %v", err)
	}
	info = withOptions(&pulumirpc.ProgramInfo{RootDirectory: "/p"}, map[string]any{"toolchain": "conda"})
	if _, _, err := pythonToolchain(info); err == nil || !strings.Contains(err.Error(), "it takes pip, poetry, uv") {
		t.Errorf("an unknown Python toolchain: %v", err)
	}
	settings, err := nodeSettingsOf(withOptions(&pulumirpc.ProgramInfo{}, map[string]any{"nodeargs": "--inspect '--title=a b'", "packagemanager": "pnpm"}))
	if err != nil || !reflect.DeepEqual(settings.nodeArgs, []string{"--inspect", "--title=a b"}) || settings.manager != "pnpm" || !settings.typescript {
		t.Errorf("nodeargs split as a shell would, pnpm kept, TypeScript by default: %+v %v", settings, err)
	}
}

func TestAHostStartedUnderAnotherNameSaysWhichItServes(t *testing.T) {
	for name, want := range map[string]language{"pulumi-language-nodejs": nodejs{}, "pulumi-language-python.exe": python{}, "pulumi-language-go": golang{}} {
		if got, err := languageOf(name); err != nil || got != want {
			t.Errorf("%s: %T %v", name, got, err)
		}
	}
	if _, err := languageOf("pulumi-language-dotnet"); err == nil || !strings.Contains(err.Error(), "link this binary as pulumi-language-nodejs, pulumi-language-python or pulumi-language-go") {
		t.Errorf("a runtime it does not serve: %v", err)
	}
}

// write makes files (path to content) under root.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNodePackagesDeclareTheirPluginsInEitherPlace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"program/index.js": "",
		// A generated SDK: pulumi-plugin.json beside package.json.
		"node_modules/gpu-rental/package.json":       `{"name":"gpu-rental","version":"0.1.0"}`,
		"node_modules/gpu-rental/pulumi-plugin.json": `{"resource":true,"name":"gpu-rental","server":"https://example.com/releases"}`,
		// An older package: the package.json's pulumi field, its plugin named after the package less its scope.
		"node_modules/@pulumi/command/package.json": `{"name":"@pulumi/command","version":"1.2.1","pulumi":{"resource":true}}`,
		// Nested in another package's node_modules, and a package that declares nothing.
		"node_modules/tool/package.json":                           `{"name":"tool","version":"1.0.0"}`,
		"node_modules/tool/node_modules/@acme/gpu/package.json":    `{"name":"@acme/gpu","version":"2.0.0","pulumi":{"resource":true,"name":"acmegpu","version":"2.0.1"}}`,
		"node_modules/.bin/ignored/package.json":                   `{"name":"ignored","pulumi":{"resource":true}}`,
		"node_modules/@pulumi/pulumi/package.json":                 `{"name":"@pulumi/pulumi","version":"3.248.0"}`,
		"node_modules/tool/node_modules/not-a-plugin/package.json": `{"name":"not-a-plugin","pulumi":{"resource":false,"name":"no"}}`,
	})
	// A linked package (npm link, workspaces) counts once.
	if err := os.Symlink(filepath.Join(dir, "node_modules", "gpu-rental"), filepath.Join(dir, "node_modules", "tool", "node_modules", "gpu-rental")); err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(dir, "program")
	got, err := nodejs{}.packages(context.Background(), &pulumirpc.ProgramInfo{RootDirectory: program, ProgramDirectory: program})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, p := range got {
		seen = append(seen, p.Kind+" "+p.Name+" "+p.Version+" "+p.Server)
	}
	want := []string{"resource acmegpu v2.0.1 ", "resource command v1.2.1 ", "resource gpu-rental v0.1.0 https://example.com/releases"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("plugins:\n got %q\nwant %q", seen, want)
	}
}

// goProgramFiles is a Go program (standard library only) that writes what the host handed it to handed.json.
var goProgramFiles = map[string]string{
	"go.mod": "module example.com/handed\n\ngo 1.21\n",
	"main.go": `package main

import (
	"encoding/json"
	"os"
)

func main() {
	seen := map[string]any{"args": os.Args[1:]}
	for _, name := range []string{"PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_MONITOR", "PULUMI_CONFIG"} {
		seen[name] = os.Getenv(name)
	}
	seen["dir"], _ = os.Getwd()
	out, _ := json.Marshal(seen)
	if err := os.WriteFile("handed.json", out, 0o644); err != nil {
		os.Exit(3)
	}
}
`,
}

func runGo(t *testing.T, dir string, options map[string]any) *pulumirpc.RunResponse {
	t.Helper()
	req := request(dir)
	withOptions(req.Info, options)
	return golang{}.run(context.Background(), launchOf(req, "", ""), req.GetInfo())
}

func TestAGoProgramIsBuiltRunAndHandedItsLaunch(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH: the host's tests build Go programs")
	}
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	t.Setenv("GPU_RENTAL_CACHE", t.TempDir())
	dir := t.TempDir()
	write(t, dir, goProgramFiles)

	// Without buildTarget: built into the executable kept for the program's folder, nothing left in TMPDIR.
	if answer := runGo(t, dir, map[string]any{}); answer.Error != "" || answer.Bail {
		t.Fatalf("the program failed: %+v", answer)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("the build left files in TMPDIR: %v", left)
	}
	var handed map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "handed.json"))
	if err == nil {
		err = json.Unmarshal(data, &handed)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"args": []any{"--fast"}, "PULUMI_STACK": "dev", "PULUMI_DRY_RUN": "true", "PULUMI_MONITOR": "127.0.0.1:7001", "PULUMI_CONFIG": `{"gpus:size":"2"}`, "dir": dir}
	if !reflect.DeepEqual(handed, want) {
		t.Errorf("the program was handed\n %v\nwant %v", handed, want)
	}

	// With buildTarget: the binary is where Pulumi.yaml says, and stays there.
	if answer := runGo(t, dir, map[string]any{"buildTarget": "bin/handed"}); answer.Error != "" {
		t.Fatalf("the program failed: %+v", answer)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "handed")); err != nil {
		t.Errorf("the buildTarget binary is not kept: %v", err)
	}

	// binary: a prebuilt one is run as it is.
	if answer := runGo(t, dir, map[string]any{"binary": filepath.Join(dir, "bin", "handed")}); answer.Error != "" {
		t.Fatalf("the prebuilt program failed: %+v", answer)
	}
}

// keptExecutable is the file a program's runs without buildTarget execute, and its identity (a link writes a new
// file in its place; go build touches an up-to-date one, so its time says nothing).
func keptExecutable(t *testing.T, dir string) (string, os.FileInfo) {
	t.Helper()
	sum := sha256.Sum256([]byte(dir))
	binary := filepath.Join(programsCache(), hex.EncodeToString(sum[:8]), "program")
	info, err := os.Stat(binary)
	if err != nil {
		t.Fatalf("no kept executable for %s: %v", dir, err)
	}
	return binary, info
}

func TestAGoProgramIsLinkedAgainOnlyWhenItChanges(t *testing.T) {
	t.Setenv("GPU_RENTAL_CACHE", t.TempDir())
	dir, gone := t.TempDir(), t.TempDir()
	write(t, dir, goProgramFiles)
	write(t, gone, goProgramFiles)
	for _, program := range []string{gone, dir} {
		if answer := runGo(t, program, map[string]any{}); answer.Error != "" {
			t.Fatalf("the program failed: %+v", answer)
		}
	}
	binary, built := keptExecutable(t, dir)
	goneBinary, _ := keptExecutable(t, gone)

	// Unchanged: the same file runs again, not relinked.
	if answer := runGo(t, dir, map[string]any{}); answer.Error != "" {
		t.Fatalf("the second run failed: %+v", answer)
	}
	if _, again := keptExecutable(t, dir); !os.SameFile(again, built) {
		t.Errorf("an unchanged program was linked again")
	}

	// Changed: linked again, and the change runs; the executable of a folder that is gone is removed meanwhile.
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"main.go": strings.Replace(goProgramFiles["main.go"], `"handed.json"`, `"changed.json"`, 1)})
	if answer := runGo(t, dir, map[string]any{}); answer.Error != "" {
		t.Fatalf("the changed program failed: %+v", answer)
	}
	if _, err := os.Stat(filepath.Join(dir, "changed.json")); err != nil {
		t.Errorf("the change did not run: %v", err)
	}
	if _, err := os.Stat(goneBinary); !os.IsNotExist(err) {
		t.Errorf("the executable of a program folder that is gone is kept: %v", err)
	}
	if _, err := os.Stat(binary); err != nil {
		t.Errorf("the executable is gone: %v", err)
	}
}

func TestAGoProgramThatDoesNotBuildSaysWhatToDo(t *testing.T) {
	t.Setenv("GPU_RENTAL_CACHE", t.TempDir())
	dir := t.TempDir()
	write(t, dir, map[string]string{"go.mod": "module example.com/broken\n\ngo 1.21\n", "main.go": "package main\n\nfunc main() { undefined() }\n"})
	answer := runGo(t, dir, map[string]any{"buildTarget": "out"})
	if !strings.Contains(answer.Error, "does not build (go build's errors are above): fix them") {
		t.Errorf("the answer: %+v", answer)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a failed build left a binary")
	}
	noMod := t.TempDir()
	write(t, noMod, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	if answer := runGo(t, noMod, map[string]any{}); !strings.Contains(answer.Error, "has no go.mod: run `go mod init <module>`") {
		t.Errorf("no go.mod: %+v", answer)
	}
}

func TestGoDependenciesAreWhatTheProgramBuildsWith(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":     "module example.com/prog\n\ngo 1.21\n\nrequire example.com/sdk v0.0.0-00010101000000-000000000000\n\nreplace example.com/sdk => ./sdk\n",
		"main.go":    "package main\n\nimport _ \"example.com/sdk\"\n\nfunc main() {}\n",
		"sdk/go.mod": "module example.com/sdk\n\ngo 1.21\n",
		"sdk/sdk.go": "package sdk\n",
	})
	deps, err := golang{}.dependencies(context.Background(), &pulumirpc.ProgramInfo{RootDirectory: dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 || deps[0].Name != "example.com/sdk" || deps[0].Version != "./sdk" {
		t.Errorf("dependencies: %v", deps)
	}
}

func TestAPythonProgramWithoutItsVirtualEnvironmentSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"__main__.py": "import pulumi\n"})
	answer := python{}.run(context.Background(), launchOf(request(dir), "", ""), request(dir).GetInfo())
	if !strings.Contains(answer.Error, "has no virtual environment at "+filepath.Join(dir, "venv")+": run `pulumi install` there") {
		t.Errorf("the answer: %+v", answer)
	}
}

func TestAProgramIsAskedToStopThenKilled(t *testing.T) {
	// One that ends when asked: its own exit code.
	polite := exec.Command("sh", "-c", `trap 'exit 7' INT; while :; do sleep 0.05; done`)
	ctx, cancel := context.WithCancel(context.Background())
	if err := polite.Start(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	if got := verdict(waitOrStop(ctx, polite, time.Minute)); !strings.Contains(got.Error, "exit code 7") {
		t.Errorf("a program that stops when asked: %+v", got)
	}
	// One that ignores the request: killed once the grace is over.
	stubborn := exec.Command("sh", "-c", `trap '' INT; while :; do sleep 0.05; done`)
	if err := stubborn.Start(); err != nil {
		t.Fatal(err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	started := time.Now()
	if got := verdict(waitOrStop(ended, stubborn, 300*time.Millisecond)); !strings.Contains(got.Error, "ended by a signal") {
		t.Errorf("a program that does not stop: %+v", got)
	}
	if waited := time.Since(started); waited > 5*time.Second {
		t.Errorf("killed after %v", waited)
	}
}

func TestTheExitCodesTheEngineIsAnswered(t *testing.T) {
	type answer struct {
		bail  bool
		error string
	}
	for code, want := range map[int]answer{
		0:  {},
		32: {bail: true},
		2:  {error: "the program ended with exit code 2 before telling the engine why (its output above says more)"},
	} {
		got := runProgram(context.Background(), exec.Command("sh", "-c", "exit "+strconv.Itoa(code)))
		if (answer{got.Bail, got.Error}) != want {
			t.Errorf("exit %d: got %+v, want %+v", code, got, want)
		}
	}
	missing := runProgram(context.Background(), exec.Command(filepath.Join(t.TempDir(), "nothing-here")))
	if !strings.Contains(missing.Error, "could not start the program") {
		t.Errorf("a program that is not there: %+v", missing)
	}
}

func TestAnUnhandledPythonErrorIsReportedFromTheProgramsOwnFrames(t *testing.T) {
	python3, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH: the host's tests check its Python launcher")
	}
	root := t.TempDir()
	write(t, root, map[string]string{
		"launcher.py":     launcherPy,
		"project/prog.py": "def size():\n    raise ValueError('no such GPU: H900')\n\nsize()\n",
		// The launcher runs the project's program (as run_in_stack would, here without an engine) and reports what
		// it raised.
		"check.py": `import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import launcher
try:
    launcher.run_as_main(os.path.join(os.path.dirname(__file__), "project", "prog.py"))
except Exception as error:
    print(launcher.own_frames_report(error, os.path.realpath(os.path.join(os.path.dirname(__file__), "project"))))
`,
	})
	out, err := exec.Command(python3, filepath.Join(root, "check.py")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	report := string(out)
	if !strings.HasPrefix(report, "The program raised ValueError and did not handle it:\n") || !strings.HasSuffix(report, "ValueError: no such GPU: H900\n") {
		t.Errorf("the report:\n%s", report)
	}
	if !strings.Contains(report, "prog.py\", line 2, in size") || strings.Contains(report, "run_as_main") {
		t.Errorf("the report shows the program's frames, from its first one on, and not the launcher's:\n%s", report)
	}
}
