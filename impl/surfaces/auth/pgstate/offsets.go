package pgstate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/authstatedb"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
)

// OffsetsSchema is the table of the Telegram pollers' offsets (offsets_schema.sql), which New
// creates; triad's db/schema/00360_auth_telegram_offsets.sql holds the same statements.
//
//go:embed offsets_schema.sql
var OffsetsSchema string

var _ telegram.Offsets = (*Store)(nil)

// ttlSeconds is telegram.OffsetTTL as the queries take it.
var ttlSeconds = telegram.OffsetTTL.Seconds()

// Offset returns the getUpdates offset the last poller of bot saved within telegram.OffsetTTL, on
// any replica, or 0 when there is none.
func (s *Store) Offset(ctx context.Context, bot string) (int64, error) {
	n, err := s.q.TelegramOffset(ctx, authstatedb.TelegramOffsetParams{Bot: bot, TtlSeconds: ttlSeconds})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pgstate: read a telegram offset: %w", err)
	}
	return n, nil
}

// SaveOffset records next as bot's offset in one statement that never moves it back (of two
// pollers overlapping, the further one's offset stays), unless the saved one is older than
// telegram.OffsetTTL.
func (s *Store) SaveOffset(ctx context.Context, bot string, next int64) error {
	err := s.q.SaveTelegramOffset(ctx, authstatedb.SaveTelegramOffsetParams{Bot: bot, NextUpdate: next, TtlSeconds: ttlSeconds})
	if err != nil {
		return fmt.Errorf("pgstate: save a telegram offset: %w", err)
	}
	return nil
}
