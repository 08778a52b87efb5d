package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
)

// TestStreamedEventsAreGroupSynced: an event read from a stream is stored at once but synced
// by the store's group sync (a machine crash before it loses the event, which the stream's
// resync repairs), while an event a plugin posted, which the harness waits on, is durable when
// its call returns. Pebble's crashable in-memory FS keeps only what was synced.
func TestStreamedEventsAreGroupSynced(t *testing.T) {
	ctx := t.Context()
	fs := vfs.NewCrashableMem()
	open := func(fs vfs.FS) (*engine.Engine, func()) {
		store := kv.NewStore("/data")
		store.FS, store.SyncEvery = fs, time.Hour
		if err := store.Open(); err != nil {
			t.Fatal(err)
		}
		reg, err := adapters.NewRegistry(adapters.Registration{Name: "opencode"})
		if err != nil {
			t.Fatal(err)
		}
		e := engine.New(store, "default")
		e.Harnesses = reg
		if err := e.Open(ctx); err != nil {
			t.Fatal(err)
		}
		return e, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = e.Close(cctx)
			_ = store.Close()
		}
	}
	e, closeAll := open(fs)
	defer closeAll()
	turns := func(id string) adapters.Event {
		return adapters.Event{Harness: "opencode", Kind: adapters.KindTurns, SessionID: id,
			Turns: []adapters.Turn{{ID: "prt_1", Role: "user", Text: "keep the parser's API stable"}}}
	}
	if err := e.PluginEvent(ctx, turns("ses_plugin")); err != nil {
		t.Fatal(err)
	}
	if err := e.Consume(ctx, turns("ses_stream")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.GetSession(ctx, "default", "ses_stream"); err != nil {
		t.Fatalf("a streamed event must be readable at once: %v", err)
	}
	stored := func(fs vfs.FS, id string) bool {
		c, closeCrashed := open(fs)
		defer closeCrashed()
		_, err := c.Store.GetSession(ctx, "default", id)
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	if !stored(crashed, "ses_plugin") {
		t.Fatal("a plugin's event was lost in a crash after its call returned")
	}
	if stored(crashed, "ses_stream") {
		t.Fatal("a streamed event was synced at once: it should wait for the group sync")
	}
	if err := e.Store.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if !stored(fs.CrashClone(vfs.CrashCloneCfg{}), "ses_stream") {
		t.Fatal("the streamed event was lost after a sync")
	}
}
