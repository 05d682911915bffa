package providertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TelegramUser is a user of the fake Telegram.
type TelegramUser struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
	// Photo, when set, is served as the user's profile photo (bytes of an image).
	Photo []byte `json:"-"`
}

// SentMessage is a message the bot sent through sendMessage.
type SentMessage struct {
	ChatID int64
	Text   string
}

// Telegram is a fake Bot API server for one bot: getMe, getUpdates (long polling honouring offset
// and timeout), sendMessage, getUserProfilePhotos, getFile and file downloads, all under
// /bot<token>/ like the real one; a wrong token gets the real 401 envelope.
type Telegram struct {
	Token, BotName string
	Server         *httptest.Server

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when updates arrive
	updates []map[string]any
	nextID  int64
	sent    []SentMessage
	photos  map[int64][]byte
	fail    bool
}

// NewTelegram starts the fake for a bot with this token and username.
func NewTelegram(t testing.TB, token, botName string) *Telegram {
	t.Helper()
	f := &Telegram{Token: token, BotName: botName, changed: make(chan struct{}), nextID: 100, photos: map[int64][]byte{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Server.Close)
	return f
}

// URL is the base URL to give the client in place of https://api.telegram.org.
func (f *Telegram) URL() string { return f.Server.URL }

// UserSends queues a private message from u to the bot, as the Telegram app does when the user
// presses "Start" on a t.me/<bot>?start=<token> link (text "/start <token>").
func (f *Telegram) UserSends(u TelegramUser, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.Photo != nil {
		f.photos[u.ID] = u.Photo
	}
	f.nextID++
	f.updates = append(f.updates, map[string]any{"update_id": f.nextID, "message": map[string]any{
		"message_id": f.nextID, "from": u, "chat": map[string]any{"id": u.ID, "type": "private", "first_name": u.FirstName},
		"date": time.Now().Unix(), "text": text}})
	close(f.changed)
	f.changed = make(chan struct{})
}

// FailUpdates makes getUpdates answer 502 until switched off.
func (f *Telegram) FailUpdates(on bool) { f.mu.Lock(); f.fail = on; f.mu.Unlock() }

// Sent returns the messages the bot has sent so far.
func (f *Telegram) Sent() []SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]SentMessage(nil), f.sent...)
}

// WaitSent waits until the bot has sent n messages or the timeout passes, and returns them.
func (f *Telegram) WaitSent(n int, timeout time.Duration) []SentMessage {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s := f.Sent(); len(s) >= n {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f.Sent()
}

func tgOK(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func tgErr(w http.ResponseWriter, status int, desc string) {
	writeJSON(w, status, map[string]any{"ok": false, "error_code": status, "description": desc})
}

func (f *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+f.Token+"/"); ok {
		f.file(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot"+f.Token+"/")
	if !ok {
		tgErr(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	var params map[string]any
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		d := json.NewDecoder(r.Body)
		d.UseNumber()
		if err := d.Decode(&params); err != nil {
			tgErr(w, http.StatusBadRequest, "Bad Request: can't parse JSON object")
			return
		}
	}
	num := func(k string) int64 {
		n, _ := params[k].(json.Number)
		v, _ := n.Int64()
		return v
	}
	switch rest {
	case "getMe":
		tgOK(w, map[string]any{"id": 7000001, "is_bot": true, "first_name": "Login Bot", "username": f.BotName,
			"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false})
	case "getUpdates":
		f.getUpdates(w, r, num("offset"), time.Duration(num("timeout"))*time.Second)
	case "sendMessage":
		text, _ := params["text"].(string)
		if num("chat_id") == 0 || text == "" {
			tgErr(w, http.StatusBadRequest, "Bad Request: message text is empty")
			return
		}
		f.mu.Lock()
		f.sent = append(f.sent, SentMessage{ChatID: num("chat_id"), Text: text})
		f.mu.Unlock()
		tgOK(w, map[string]any{"message_id": 1, "chat": map[string]any{"id": num("chat_id"), "type": "private"}, "date": time.Now().Unix(), "text": text})
	case "getUserProfilePhotos":
		f.mu.Lock()
		_, has := f.photos[num("user_id")]
		f.mu.Unlock()
		if !has {
			tgOK(w, map[string]any{"total_count": 0, "photos": []any{}})
			return
		}
		id := num("user_id")
		fid := func(size string) string { return "photo-" + size + "-" + jsonString(id) }
		tgOK(w, map[string]any{"total_count": 1, "photos": [][]map[string]any{{
			{"file_id": fid("s"), "file_unique_id": "us", "width": 80, "height": 80},
			{"file_id": fid("m"), "file_unique_id": "um", "width": 160, "height": 160},
			{"file_id": fid("l"), "file_unique_id": "ul", "width": 640, "height": 640},
		}}})
	case "getFile":
		fileID, _ := params["file_id"].(string)
		if !strings.HasPrefix(fileID, "photo-") {
			tgErr(w, http.StatusBadRequest, "Bad Request: invalid file_id")
			return
		}
		tgOK(w, map[string]any{"file_id": fileID, "file_unique_id": "u", "file_size": 100, "file_path": "photos/" + fileID + ".jpg"})
	default:
		tgErr(w, http.StatusNotFound, "Not Found")
	}
}

func jsonString(n int64) string { b, _ := json.Marshal(n); return string(b) }

func (f *Telegram) file(w http.ResponseWriter, path string) {
	// photos/photo-<size>-<user id>.jpg
	name := strings.TrimSuffix(strings.TrimPrefix(path, "photos/photo-"), ".jpg")
	_, idStr, _ := strings.Cut(name, "-")
	var id int64
	_ = json.Unmarshal([]byte(idStr), &id)
	f.mu.Lock()
	b, ok := f.photos[id]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(b))
	_, _ = w.Write(b)
}

func (f *Telegram) getUpdates(w http.ResponseWriter, r *http.Request, offset int64, timeout time.Duration) {
	if timeout > 5*time.Second {
		timeout = 5 * time.Second // keep tests snappy; a real server would hold up to 50 s
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		if f.fail {
			f.mu.Unlock()
			tgErr(w, http.StatusBadGateway, "Bad Gateway")
			return
		}
		// Acknowledged updates (id < offset) are forgotten, as Telegram does.
		keep := f.updates[:0]
		for _, u := range f.updates {
			if u["update_id"].(int64) >= offset {
				keep = append(keep, u)
			}
		}
		f.updates = keep
		out := append([]map[string]any(nil), f.updates...)
		ch := f.changed
		f.mu.Unlock()
		if len(out) > 0 || timeout <= 0 {
			tgOK(w, out)
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tgOK(w, []any{})
			return
		case <-r.Context().Done():
			return
		}
	}
}
