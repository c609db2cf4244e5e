package ai_test

import (
	"net/http"
	"testing"

	"corkboard/ai/aitest"
	"corkboard/aifeature"
)

// Usage.Errors counts the model requests that failed, for the operator's
// error rate: an error status, an error line, a stream cut short; a good
// answer counts none.
func TestUsageCountsModelErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply aitest.Reply
		want  int
	}{
		{"OK", aitest.Text("fine"), 0},
		{"Status", aitest.Reply{Status: http.StatusInternalServerError, Error: "boom"}, 1},
		{"ErrorLine", aitest.Reply{Text: []string{"par"}, ErrorLine: "out of memory"}, 1},
		{"Cut", aitest.Reply{Text: []string{"par"}, Cut: true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Always(tt.reply))
			svc, usage := newService(t, fake)
			_ = svc.Chat(t.Context(), chatRequest("hi"), &recorder{})
			u := usage()
			if len(u) != 1 || u[0].Feature != aifeature.Chat || u[0].Calls != 1 || u[0].Errors != tt.want {
				t.Fatalf("usage = %+v, want one chat call with %d errors", u, tt.want)
			}
		})
	}
}
