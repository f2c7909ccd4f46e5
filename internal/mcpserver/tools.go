package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver/parked"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCheckWait bounds check_ask's wait_seconds.
const maxCheckWait = 60

// tools holds what the tool handlers share.
type tools struct {
	svc      *app.Service
	interval time.Duration
	version  string
	log      *slog.Logger
	byName   map[string]toolFunc // the tools, for tools/calls askd serves itself
	lot      *parked.Lot         // the calls parked on their connections
}

func newTools(svc *app.Service, opts Options) *tools {
	t := &tools{svc: svc, interval: opts.ProgressInterval, version: opts.Version, log: opts.Logger, lot: parked.NewLot()}
	t.byName = map[string]toolFunc{
		"ask_user_question": t.askUserQuestion,
		"ask":               t.ask,
		"request_approval":  t.requestApproval,
		"permission_prompt": t.permissionPrompt,
		"check_ask":         t.checkAsk,
		"cancel_ask":        t.cancelAsk,
	}
	if t.interval <= 0 {
		t.interval = 30 * time.Second
	}
	if t.version == "" {
		t.version = "dev"
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

func (t *tools) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "askd: ask a person", Version: t.version}, &mcp.ServerOptions{
		Instructions: "askd lets you ask the person you work for, through their askd inbox. " +
			"Use ask_user_question when you cannot continue without their choice (it waits for the answer); " +
			"ask when they should know or decide something but you can keep working (the answer reaches you later); " +
			"request_approval before an action that needs their sign-off. " +
			"check_ask shows where your asks stand; cancel_ask takes one back.",
		Capabilities: Capabilities(),
		Logger:       sdkLogger(t.log),
	})
	s.AddTool(&mcp.Tool{
		Name:  "ask_user_question",
		Title: "Ask the user a question and wait for the answer",
		Description: "Ask the person 1 to 4 multiple-choice questions in their askd inbox and wait for the answers (up to the server's question timeout, 5 minutes by default). " +
			"Use it when you cannot go on without their choice: a design decision, an ambiguous requirement, a preference. " +
			"Each question has a short header and 2 to 4 options; the person may also answer in their own words. " +
			"The result has answers keyed by question text: the chosen label, a list of labels for multiSelect questions, or the person's own words. " +
			"If answers is empty, read response: the person's reply, or a note that no one answered in time, in which case proceed on your own judgement or ask again. " +
			"If the call was cut off (a client timeout), the question stays open: call ask_user_question again with the same questions to re-attach to it and get the answer, or find the answer later with check_ask. " +
			"For something the person should know or decide without you waiting, use ask instead.",
		InputSchema: questionSchema(),
	}, t.handler(t.byName["ask_user_question"]))
	s.AddTool(&mcp.Tool{
		Name:  "ask",
		Title: "Tell the user you need something, without waiting",
		Description: "Post a non-blocking attention ask to the person's inbox and return at once with its id. " +
			"kind decision: you need them to choose (give options, and recommended if you have a preference); " +
			"action: they must do something you cannot; ready: work is ready for their review; blocked: you cannot proceed without them. " +
			"Keep working on whatever does not depend on the answer. The answer reaches you later, as your next prompt or via check_ask with the id. " +
			"Your session has one open attention ask: a new ask replaces the previous one (same id, revision + 1). " +
			"Write words only: the inbox shows no links and runs no commands.",
		InputSchema: askSchema(),
	}, t.handler(t.byName["ask"]))
	s.AddTool(&mcp.Tool{
		Name:  "request_approval",
		Title: "Ask the user to approve an action",
		Description: "Ask the person to approve something before you do it: a deploy, a migration, a purchase, a destructive command. " +
			"Put what you will run or change in details, and the parameters in payload: the person may approve, approve with an edited payload (status modified: use their payload), or reject (an error result, with their comment). " +
			"It waits a grace period (30 s by default, grace_seconds up to 120); with no decision by then it returns status pending and an id: " +
			"do not perform the action; continue other work and call check_ask with the id later, or wait for the decision to be told to you.",
		InputSchema: approvalSchema(),
	}, t.handler(t.byName["request_approval"]))
	s.AddTool(&mcp.Tool{
		Name:  "permission_prompt",
		Title: "Claude Code permission prompt",
		Description: "Claude Code's --permission-prompt-tool contract (claude -p --permission-prompt-tool mcp__askd__permission_prompt): " +
			"asks the person whether a tool call may run, and answers with a JSON decision. Not meant to be called directly by a model.",
		InputSchema: permissionSchema(),
	}, t.handler(t.byName["permission_prompt"]))
	s.AddTool(&mcp.Tool{
		Name:  "check_ask",
		Title: "Check on your asks",
		Description: "With id: the current state of one of your asks, with the person's answer once there is one (settled asks give the same outcome every time). " +
			"wait_seconds (at most 60) waits for a pending ask to settle first. " +
			"Without id: your session's pending asks, and the answers to asks you have not been told of yet, e.g. of a question whose call was cut off.",
		InputSchema: checkSchema(),
	}, t.handler(t.byName["check_ask"]))
	s.AddTool(&mcp.Tool{
		Name:        "cancel_ask",
		Title:       "Withdraw one of your asks",
		Description: "Withdraw one of your pending asks, e.g. when you no longer need the answer. It leaves the person's inbox.",
		InputSchema: cancelSchema(),
	}, t.handler(t.byName["cancel_ask"]))
	return s
}

// call is one tools/call's input, however it reached the server.
type call struct {
	args      json.RawMessage
	toolUseID string // Claude Code's _meta "claudecode/toolUseId"
}

// decode strictly decodes the call's arguments (absent means {}).
func (in call) decode(v any) error {
	raw := in.args
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	return askd.Decode(raw, v)
}

// result is a tool result: one text block, which is also the
// structuredContent when structured.
type result struct {
	text       []byte
	structured bool
	isError    bool
}

// wait is a tool call that has an answer only once its ask settles, until
// passes, or the wait fails: app's wait (the one outcome use case), which
// the transport drives; done makes the result from its outcome.
type wait struct {
	app.Wait
	done func(a *askd.Ask, err error) result
}

// toolFunc is one tool: a result at once, or a wait.
type toolFunc func(ctx context.Context, c askd.Caller, in call) (result, *wait)

// handler adapts a tool to the SDK, which runs it on a goroutine of its own
// that blocks while the tool waits (in-memory and stdio sessions). Over
// streamable HTTP askd runs tools itself, and parks waiting calls without a
// goroutine (see park.go).
func (t *tools) handler(f toolFunc) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := app.CallerFrom(ctx)
		if !ok {
			return nil, errNoCaller
		}
		in := call{args: req.Params.Arguments}
		in.toolUseID, _ = req.Params.Meta[claudeToolUseMeta].(string)
		r, w := f(ctx, c, in)
		if w != nil {
			a, err := t.block(ctx, req, c, w)
			if ctx.Err() != nil {
				// Cancelled: the ask was cut off; nobody reads a result.
				return nil, ctx.Err()
			}
			r = w.done(a, err)
		}
		return r.sdk(), nil
	}
}

// sdk is the result as the SDK's type.
func (r result) sdk() *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r.text)}}, IsError: r.isError}
	if r.structured {
		out.StructuredContent = json.RawMessage(r.text)
	}
	return out
}

func (t *tools) askUserQuestion(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var args askUserQuestionInput
	if err := in.decode(&args); err != nil {
		return errorResult(err), nil
	}
	a, err := t.svc.Create(ctx, c, &askd.AskInput{Kind: askd.KindQuestion, Questions: args.questions()}, app.CreateOptions{})
	if err != nil {
		return errorResult(err), nil
	}
	return result{}, &wait{Wait: app.Wait{Ask: a.ID, Mode: app.AwaitAnswer}, done: func(a *askd.Ask, err error) result {
		if err != nil {
			return errorResult(err)
		}
		return jsonResult(t.questionOutcome(a), false)
	}}
}

// questionOutcome is ask_user_question's result: Claude's AskUserQuestion
// output shape.
func (t *tools) questionOutcome(a *askd.Ask) questionResult {
	out := questionResult{Questions: a.Questions, Answers: map[string]askd.Choice{}}
	switch {
	case a.Status == askd.StatusAnswered && a.Answer != nil:
		for k, v := range a.Answer.Answers {
			out.Answers[k] = v
		}
		out.Response = a.Answer.Response
	case a.CancelReason == askd.ReasonTimeout:
		out.Response = fmt.Sprintf("No one answered within %s. Proceed on your own judgement, or ask again.", app.HumanDuration(t.timeoutOf(a)))
	case a.CancelReason == askd.ReasonDismissed:
		if a.Answer != nil && a.Answer.Response != "" {
			out.Response = a.Answer.Response
		} else {
			out.Response = "The user closed the question without answering. Proceed on your own judgement, or ask again."
		}
	case a.CancelReason == askd.ReasonWithdrawn:
		out.Response = "The question was withdrawn before anyone answered."
	case a.Pending():
		out.Response = fmt.Sprintf("Still waiting for an answer: call check_ask with id %d.", a.ID)
	}
	return out
}

type questionResult struct {
	Questions []askd.Question        `json:"questions"`
	Answers   map[string]askd.Choice `json:"answers"`
	Response  string                 `json:"response,omitempty"`
}

// timeoutOf is how long the ask waited before it timed out.
func (t *tools) timeoutOf(a *askd.Ask) time.Duration {
	if a.Deadline != nil {
		return a.Deadline.Sub(a.CreatedAt)
	}
	return t.svc.Config().QuestionTimeout
}

func (t *tools) ask(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var args askInput
	if err := in.decode(&args); err != nil {
		return errorResult(err), nil
	}
	if args.Kind != "" && !args.Kind.IsAttention() {
		return errorResult(askd.Errorf(askd.EINVALID, "kind: %q is not one of decision, action, ready, blocked (use ask_user_question or request_approval)", args.Kind)), nil
	}
	if args.Kind == "" {
		return errorResult(askd.Errorf(askd.EINVALID, "kind: required, one of decision, action, ready, blocked")), nil
	}
	a, err := t.svc.Create(ctx, c, &askd.AskInput{Kind: args.Kind, Title: args.Title, Details: args.Details, Options: options(args.Options), Recommended: args.Recommended}, app.CreateOptions{})
	if err != nil {
		return errorResult(err), nil
	}
	return jsonResult(struct {
		ID       int64       `json:"id"`
		Key      string      `json:"key"`
		Revision int         `json:"revision"`
		Status   askd.Status `json:"status"`
	}{a.ID, a.Key, a.Revision, a.Status}, false), nil
}

func (t *tools) requestApproval(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var args requestApprovalInput
	if err := in.decode(&args); err != nil {
		return errorResult(err), nil
	}
	if string(args.Payload) == "null" {
		args.Payload = nil
	}
	a, err := t.svc.Create(ctx, c, &askd.AskInput{Kind: askd.KindApproval, Title: args.Title, Details: args.Details, Payload: args.Payload, GraceSeconds: args.GraceSeconds}, app.CreateOptions{})
	if err != nil {
		return errorResult(err), nil
	}
	// No decision within the grace: pending, and the decision is told later (§5).
	return result{}, &wait{Wait: app.Wait{Ask: a.ID, Until: time.Now().Add(t.svc.Grace(args.GraceSeconds)), Mode: app.AwaitGrace}, done: func(a *askd.Ask, err error) result {
		if err != nil {
			return errorResult(err)
		}
		return jsonResult(approvalOutcome(a))
	}}
}

// approvalResult is request_approval's result, and check_ask's for approvals.
type approvalResult struct {
	ID       int64             `json:"id"`
	Status   string            `json:"status"` // pending, approved, modified, rejected, cancelled
	Payload  json.RawMessage   `json:"payload,omitempty"`
	Comment  string            `json:"comment,omitempty"`
	Reason   askd.CancelReason `json:"reason,omitempty"`
	Response string            `json:"response,omitempty"`
	By       string            `json:"decided_by,omitempty"`
	Hint     string            `json:"hint,omitempty"`
}

// approvalOutcome is the result for an approval; isError only for a rejection.
func approvalOutcome(a *askd.Ask) (approvalResult, bool) {
	r := approvalResult{ID: a.ID, Status: string(a.Status)}
	switch {
	case a.Pending():
		r.Hint = fmt.Sprintf("call check_ask with id %d", a.ID)
	case a.Status == askd.StatusAnswered && a.Answer != nil:
		r.Status, r.Comment, r.By = a.Answer.Decision, a.Answer.Comment, a.SettledBy
		if a.Answer.Decision == askd.DecisionModified {
			r.Payload = a.Answer.Payload
		}
		return r, a.Answer.Decision == askd.DecisionRejected
	default:
		r.Reason = a.CancelReason
		if a.Answer != nil {
			r.Response = a.Answer.Response
		}
		if a.CancelReason == askd.ReasonDismissed {
			r.By = a.SettledBy
		}
	}
	return r, false
}

func (t *tools) checkAsk(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var args checkAskInput
	if err := in.decode(&args); err != nil {
		return errorResult(err), nil
	}
	if args.WaitSeconds != nil && (*args.WaitSeconds < 0 || *args.WaitSeconds > maxCheckWait) {
		return errorResult(askd.Errorf(askd.EINVALID, "wait_seconds: %d, must be 0 to %d", *args.WaitSeconds, maxCheckWait)), nil
	}
	if args.ID == nil {
		if args.WaitSeconds != nil {
			return errorResult(askd.Errorf(askd.EINVALID, "wait_seconds: only with id")), nil
		}
		// Pending asks, then settled ones the session was not told of, with
		// their outcomes (told now): a cut-off call's answer is found here.
		asks, err := t.svc.CheckAll(ctx, c)
		if err != nil {
			return errorResult(err), nil
		}
		list := make([]askView, 0, len(asks))
		for _, a := range asks {
			v := askView{ID: a.ID, Kind: a.Kind, Status: string(a.Status), Summary: a.Summary(), CreatedAt: &a.CreatedAt}
			v.ApprovalsNeeded, v.Approvals = a.ApprovalsNeeded, a.Approvals
			if !a.Pending() {
				v, _ = t.view(a)
				v.CreatedAt = &a.CreatedAt
			}
			list = append(list, v)
		}
		return jsonResult(struct {
			Session string    `json:"session"`
			Asks    []askView `json:"asks"`
		}{c.Session, list}, false), nil
	}
	id := *args.ID
	if id <= 0 {
		return errorResult(askd.Errorf(askd.EINVALID, "id: %d is not an ask id (a positive integer)", id)), nil
	}
	check := func(ctx context.Context) result {
		a, err := t.svc.Check(ctx, c, id)
		if err != nil {
			return t.askError(id, err)
		}
		return jsonResult(t.view(a))
	}
	if args.WaitSeconds == nil || *args.WaitSeconds == 0 {
		return check(ctx), nil
	}
	a, err := t.svc.Get(ctx, c, id)
	if err != nil {
		return t.askError(id, err), nil
	}
	return result{}, &wait{Wait: app.Wait{Ask: a.ID, Until: time.Now().Add(time.Duration(*args.WaitSeconds) * time.Second), Mode: app.AwaitCheck}, done: func(a *askd.Ask, err error) result {
		if err != nil {
			return t.askError(id, err)
		}
		return jsonResult(t.view(a))
	}}
}

// askView is check_ask's and cancel_ask's picture of one ask.
type askView struct {
	ID        int64                  `json:"id"`
	Kind      askd.Kind              `json:"kind,omitempty"`
	Status    string                 `json:"status"`
	Summary   string                 `json:"summary,omitempty"`
	Key       string                 `json:"key,omitempty"`
	Revision  int                    `json:"revision,omitempty"`
	Reason    askd.CancelReason      `json:"reason,omitempty"`
	Questions []askd.Question        `json:"questions,omitempty"`
	Answers   map[string]askd.Choice `json:"answers,omitempty"`
	Answer    string                 `json:"answer,omitempty"`
	Response  string                 `json:"response,omitempty"`
	Payload   json.RawMessage        `json:"payload,omitempty"`
	Comment   string                 `json:"comment,omitempty"`
	Action    string                 `json:"action,omitempty"`  // form: accept, decline or cancel
	Content   map[string]any         `json:"content,omitempty"` // form: what the person entered
	// An approval a policy covers (SPEC §11): how many people must approve
	// it, and who has so far.
	ApprovalsNeeded int             `json:"approvals_needed,omitempty"`
	Approvals       []askd.Approval `json:"approvals,omitempty"`
	By              string          `json:"settled_by,omitempty"`
	CreatedAt       *time.Time      `json:"created_at,omitempty"`
	Message         string          `json:"message,omitempty"`
	Hint            string          `json:"hint,omitempty"`
	Error           string          `json:"error,omitempty"`
}

// view describes an ask for check_ask; a rejected approval is an error result.
func (t *tools) view(a *askd.Ask) (askView, bool) {
	v := askView{ID: a.ID, Kind: a.Kind, Status: string(a.Status), Summary: a.Summary(), Key: a.Key, Reason: a.CancelReason}
	if a.Kind.IsAttention() {
		v.Revision = a.Revision
	}
	isErr := false
	switch a.Kind {
	case askd.KindQuestion:
		q := t.questionOutcome(a)
		v.Questions = q.Questions
		if !a.Pending() {
			v.Answers, v.Response = q.Answers, q.Response
		}
	case askd.KindApproval:
		r, rejected := approvalOutcome(a)
		v.Status, v.Payload, v.Comment, v.Response = r.Status, r.Payload, r.Comment, r.Response
		isErr = rejected
		v.ApprovalsNeeded, v.Approvals = a.ApprovalsNeeded, a.Approvals
	case askd.KindForm:
		if !a.Pending() {
			o := app.FormOutcome(a)
			v.Action, v.Content = o.Action, o.Content
		}
	default:
		if a.Answer != nil {
			v.Answer, v.Response = a.Answer.Answer, a.Answer.Response
		}
	}
	if a.Pending() {
		v.Hint = fmt.Sprintf("no answer yet: call check_ask with id %d later (wait_seconds up to %d)", a.ID, maxCheckWait)
	} else {
		v.By = a.SettledBy
		v.Message = app.ToldText(a)
	}
	return v, isErr
}

// askError is the result for an ask the caller cannot see (status unknown) or
// any other failure.
func (t *tools) askError(id int64, err error) result {
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return jsonResult(askView{ID: id, Status: "unknown", Error: fmt.Sprintf("no ask %d in this session", id)}, true)
	}
	return errorResult(err)
}

func (t *tools) cancelAsk(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var args cancelAskInput
	if err := in.decode(&args); err != nil {
		return errorResult(err), nil
	}
	if args.ID == nil || *args.ID <= 0 {
		return errorResult(askd.Errorf(askd.EINVALID, "id: required, the id of your pending ask")), nil
	}
	a, err := t.svc.Withdraw(ctx, c, *args.ID)
	if err != nil {
		if e := conflictAsk(err); e != nil {
			v, _ := t.view(e)
			v.Error = askd.ErrorMessage(err)
			return jsonResult(v, true), nil
		}
		return t.askError(*args.ID, err), nil
	}
	v, _ := t.view(a)
	v.Message = ""
	return jsonResult(v, false), nil
}

// conflictAsk returns the current state an ECONFLICT error carries.
func conflictAsk(err error) *askd.Ask {
	var e *askd.Error
	if askd.ErrorCode(err) == askd.ECONFLICT && errors.As(err, &e) {
		return e.Ask
	}
	return nil
}
