// Package pgtest runs a private PostgreSQL server for tests: Debian's
// postgresql binaries (initdb, pg_ctl; .ci/run installs them), a cluster in a
// temporary directory listening on 127.0.0.1 at a free port, password
// authentication (scram-sha-256) for user kumo, stopped and removed when the test
// ends. Run as root, the server runs as nobody (PostgreSQL refuses root). Tests
// using it are skipped with -short; without -short a missing PostgreSQL fails
// the test, naming what to install.
//
//	srv := pgtest.Start(t)
//	b, err := postgres.New(ctx, srv.Database(t)) // an empty database of its own
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kumoproj/kumo/internal/quietport"
)

// User is the superuser the cluster is created with.
const User = "kumo"

// Server is a running PostgreSQL cluster.
type Server struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Password is User's password; PassFile holds it in libpq's format.
	Password string
	PassFile string

	dir  string
	data string
	bin  string
	opts string // the server's options, the same at every (re)start
	cred *syscall.Credential
}

// BinDir finds the directory of initdb and pg_ctl: $KUMO_PG_BIN, else the
// newest /usr/lib/postgresql/<major>/bin, else the directory of initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("KUMO_PG_BIN"); d != "" {
		return d, nil
	}
	if found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(found) > 0 {
		sort.Slice(found, func(i, j int) bool { return majorOf(found[i]) > majorOf(found[j]) })
		return filepath.Dir(found[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL's initdb was not found (in $KUMO_PG_BIN, /usr/lib/postgresql/*/bin or PATH): install Debian's postgresql package (apt-get install -y postgresql)")
}

func majorOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start starts a cluster for the test and removes it when the test ends. It
// skips the test with -short.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a PostgreSQL server; skipped with -short")
	}
	s, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// New starts a cluster for a caller without a test (a benchmark command),
// which must Stop it.
func New() (*Server, error) { return start() }

func start() (s *Server, err error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kumo-pg-")
	if err != nil {
		return nil, err
	}
	s = &Server{dir: dir, data: filepath.Join(dir, "data"), bin: bin}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if os.Geteuid() == 0 {
		if s.cred, err = nobody(); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	s.Password = hex.EncodeToString(pw)
	pwFile := filepath.Join(dir, "pw")
	if err := s.writeFile(pwFile, s.Password+"\n"); err != nil {
		return nil, err
	}
	if out, err := s.run("initdb", "-D", s.data, "-U", User, "--pwfile="+pwFile, "--auth=scram-sha-256",
		"-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		return nil, err
	}
	s.Port = ports[0]
	// The disk's durability off (fsync, full-page writes): a test cluster is
	// thrown away and the machine under it never crashes. Commits stay
	// synchronous: a commit is acknowledged once its WAL is written to the
	// kernel, so Restart (a crash of PostgreSQL, not of the machine) loses no
	// acknowledged transaction. With synchronous_commit=off it lost the last
	// ~200 ms of them, and Temporal's history service, which acts on each
	// acknowledged write, stalled runs on activities it had handed out and
	// then forgot (TestRestartKeepsCommits; docs/performance.md).
	s.opts = fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=300",
		s.Port, dir)
	if err := s.pgStart(); err != nil {
		return nil, err
	}
	s.PassFile = filepath.Join(dir, "pgpass")
	if err := os.WriteFile(s.PassFile, fmt.Appendf(nil, "127.0.0.1:%d:*:%s:%s\n", s.Port, User, s.Password), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// pgStart starts the server and waits until it accepts connections.
func (s *Server) pgStart() error {
	if out, err := s.run("pg_ctl", "-D", s.data, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "-o", s.opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Restart stops the server at once, as a crash would (immediate mode: no
// checkpoint, every connection cut), and starts it again on the same port
// and data, which it recovers from its write-ahead log: every transaction
// acknowledged before the stop is there after it.
func (s *Server) Restart() error {
	if out, err := s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return s.pgStart()
}

// nobody is the account a root test runs the server as.
func nobody() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs another account: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		return os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// Stop stops the server at once and removes its files.
func (s *Server) Stop() {
	if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err == nil {
		_, _ = s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(s.dir)
}

// URL is the backend URL of database db, with the password file in its query
// (passfile=...), never the password itself.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&passfile=%s", User, s.Port, db, s.PassFile)
}

// BareURL is the backend URL of database db as a user writes it: the password
// comes from the environment (Env).
func (s *Server) BareURL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, s.Port, db)
}

// Env is the environment (NAME=value) that gives the password to a kumo
// process, as a user sets it.
func (s *Server) Env() []string {
	return []string{"PGPASSWORD=" + s.Password, "PGPASSFILE=" + os.DevNull}
}

// NewDatabase creates an empty database and returns its name.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := make([]byte, 6)
	_, _ = rand.Read(name)
	db := "kumo_" + hex.EncodeToString(name)
	if err := s.CreateDatabase(db); err != nil {
		t.Fatal(err)
	}
	return db
}

// Database creates an empty database for the test and returns its URL.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	return s.URL(s.NewDatabase(t))
}

// CreateDatabase creates database db.
func (s *Server) CreateDatabase(db string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("pgtest: create database %s: %w", db, err)
	}
	return nil
}
