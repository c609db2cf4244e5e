package billing_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"corkboard/billing"
)

// The webhook handler's path: verify the raw body, decode, decide.
func Example_webhook() {
	secret := "whsec_example"
	body := []byte(`{"id":"evt_1","type":"customer.subscription.updated",` +
		`"data":{"object":{"id":"sub_1","customer":"cus_1","status":"active",` +
		`"items":{"data":[{"price":{"id":"price_abc","product":"prod_xyz"}}]}}}}`)

	// What Stripe would send.
	sent := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(sent.Unix(), 10) + "." + string(body)))
	h := http.Header{}
	h.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", sent.Unix(), hex.EncodeToString(mac.Sum(nil))))

	verifier, err := billing.NewVerifier("stripe", billing.ParseSecrets(secret))
	if err != nil {
		panic(err)
	}
	planMap, err := billing.ParsePlanMap("price_abc=pro,prod_team=team")
	if err != nil {
		panic(err)
	}

	if err := verifier.Verify(h, body, sent.Add(time.Minute)); err != nil {
		fmt.Println("400:", err)
		return
	}
	ev, err := billing.ParseWebhook(h, body)
	if err != nil {
		fmt.Println("400:", err)
		return
	}
	plan, change := billing.PlanFor(ev, planMap, billing.Free)
	fmt.Println(ev.ID, ev.CustomerID, plan, change)
	// Output: evt_1 cus_1 pro true
}

func ExampleMonthResetsAt() {
	t := time.Date(2026, 12, 17, 15, 4, 5, 0, time.UTC)
	fmt.Println(billing.MonthKey(t), billing.MonthResetsAt(t).Format(time.RFC3339))
	// Output: 2026-12 2027-01-01T00:00:00Z
}
