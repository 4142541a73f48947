package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strings"
)

// clientName is the name a kumo client sends for itself (user@host).
func clientName() string {
	u, err := user.Current()
	name := "?"
	if err == nil {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		return name
	}
	return name + "@" + host
}

// ownerSubject is the subject kumo's frontend stamps for this account's
// requests: the owner of the test's homes, "local:<user>".
func ownerSubject() string {
	u, err := user.Current()
	if err != nil {
		return "?"
	}
	return "local:" + u.Username
}

// checkPeople: `run show` (text and JSON), `release show`, `run logs` and
// `kumo audit` all name who started the run and who answered it (verb:
// "approved" or "rejected"): the subject kumo's frontend authenticated and
// stamped, verified — never the name the client sent for itself.
func (e *env) checkPeople(runID string, revision int, verb string) {
	e.t.Helper()
	me := ownerSubject()
	field := map[string]string{"approved": "approvals", "rejected": "rejectedBy"}[verb]
	answerer := func(people map[string]any) map[string]any {
		switch v := people[field].(type) {
		case []any:
			if len(v) == 1 {
				a, _ := v[0].(map[string]any)
				return a
			}
		case map[string]any:
			return v
		}
		return nil
	}
	isMe := func(what string, a map[string]any) {
		e.t.Helper()
		if a == nil || a["name"] != me || a["verified"] != true || a["time"] == nil {
			e.t.Errorf("%s: %v, want %s, verified, with a time", what, a, me)
		}
	}

	var show struct {
		People map[string]any `json:"people"`
	}
	if err := json.Unmarshal([]byte(e.ok("run", "show", runID, "-o", "json").stdout), &show); err != nil {
		e.t.Fatal(err)
	}
	starter, _ := show.People["startedBy"].(map[string]any)
	isMe("run show -o json: startedBy", starter)
	isMe("run show -o json: "+field, answerer(show.People))
	text := e.ok("run", "show", runID).stdout
	title := map[string]string{"approved": "Approved by:", "rejected": "Rejected by:"}[verb]
	for _, want := range []string{"Started by:", title} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, want) && strings.Contains(line, " "+me+" at ") && !strings.Contains(line, clientName()) {
				found = true
			}
		}
		if !found {
			e.t.Errorf("run show has no line %q naming %s:\n%s", want, me, text)
		}
	}

	rel := e.release(revision)
	relStarter, _ := rel["startedBy"].(map[string]any)
	isMe("release show: startedBy", relStarter)
	isMe("release show: "+field, answerer(rel))

	logs := e.ok("run", "logs", runID).stdout
	for _, want := range []string{"started by " + me + " at ", verb + " by " + me + " at "} {
		if !strings.Contains(logs, want) {
			e.t.Errorf("run logs lack %q:\n%s", want, logs)
		}
	}

	var audit []map[string]any
	if err := json.Unmarshal([]byte(e.ok("audit", "-o", "json").stdout), &audit); err != nil {
		e.t.Fatal(err)
	}
	action := map[string]string{"approved": "approve", "rejected": "reject"}[verb]
	found := false
	for _, a := range audit {
		if a["action"] == action && a["subject"] == me && a["verified"] == true && a["result"] == "allowed" &&
			a["project"] == e.project && a["target"] == fmt.Sprintf("kumo/%s/default", e.project) {
			found = true
		}
	}
	if !found {
		e.t.Errorf("kumo audit has no %s by %s of %s: %v", action, me, e.project, audit)
	}
}
