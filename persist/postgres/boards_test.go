package postgres_test

import (
	"context"
	"testing"

	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

func TestSecretSurvivesReopen(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	s1 := append([]byte(nil), db.Secret()...)
	db.Close()
	db, err = postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(s1) != 32 || string(s1) != string(db.Secret()) {
		t.Fatalf("secret changed across reopen or wrong size (%d bytes)", len(s1))
	}
}
