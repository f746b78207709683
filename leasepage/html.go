package leasepage

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"
)

// Bar geometry, in pixels.
const (
	barWidth  = 420
	barHeight = 18
)

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"secs": func(s float64) string {
		return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
	},
	"clock":     func(t time.Time) string { return t.Format("15:04:05.0") },
	"deref":     func(f *float64) float64 { return *f },
	"deref_int": func(n *int) int { return *n },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left;vertical-align:middle}
th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.lease_lost td{background:#fde8e8}
.muted{color:#777}
code{font-size:13px;white-space:nowrap}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="muted">{{clock .V.Now}} · reloads every {{.Refresh}} s · <a href="?format=json">JSON</a> · bars run from receive to lease deadline; ticks are beats, the blue line is now</p>
<h2>In flight: {{len .V.InFlight}}</h2>
<table id="in-flight">
<tr><th>message ID</th><th>state</th><th>receives</th><th>age</th><th>since last beat</th><th>deadline in</th><th>extensions</th><th>group</th><th>lease</th></tr>
{{range .Rows}}<tr class="lease {{.L.State}}" data-message-id="{{.L.MessageID}}">
<td><code>{{.L.MessageID}}</code></td><td>{{.L.State}}{{with .L.LostReason}} ({{.}}){{end}}</td>
<td class="n">{{.L.ReceiveCount}}</td><td class="n">{{secs .L.Age}}</td>
<td class="n">{{if .L.SinceBeat}}{{secs (deref .L.SinceBeat)}}{{else}}never{{end}}</td>
<td class="n">{{secs .L.DeadlineIn}}</td><td class="n">{{.L.Extensions}}</td><td>{{.L.MessageGroup}}</td>
<td>{{.Bar}}</td></tr>
{{else}}<tr><td colspan="9" class="muted">nothing in flight</td></tr>
{{end}}</table>
<h2>Counts</h2>
<table id="counts">
<tr><th>handler runs</th>{{range $k, $v := .V.Outcomes}}<td>{{$k}} <b>{{$v}}</b></td>{{end}}</tr>
<tr><th>leases lost</th>{{range $k, $v := .V.LeasesLost}}<td>{{$k}} <b>{{$v}}</b></td>{{end}}</tr>
<tr><th>calls</th><td>receives <b>{{.V.Receives}}</b></td><td>receive errors <b>{{.V.ReceiveErrors}}</b></td><td>extensions <b>{{.V.Extensions}}</b></td><td>late extensions <b>{{.V.LateExtensions}}</b></td></tr>
<tr><th>lease</th><td>extension <b id="extension">{{if .V.Lease.Extension}}{{secs .V.Lease.Extension}}{{else}}–{{end}}</b></td><td>beat gap, 99th percentile <b id="beat-gap">{{if .V.Lease.BeatGap}}{{secs .V.Lease.BeatGap}}{{else}}–{{end}}</b></td></tr>
{{with .V.Scaling}}<tr><th>queue</th><td>backlog <b id="backlog">{{.Backlog}}</b></td><td>in flight <b id="queue-in-flight">{{.InFlight}}</b></td><td>dead-letter queue <b id="dead-letters">{{if .DeadLetters}}{{deref_int .DeadLetters}}{{else}}–{{end}}</b></td><td class="muted">read {{clock .ReadAt}}</td></tr>
<tr><th>scaling</th><td>per consumer <b id="backlog-per-consumer">{{printf "%.1f" .BacklogPerConsumer}}</b></td><td>consumers recommended <b id="recommended">{{.RecommendedConsumers}}</b></td></tr>{{end}}
<tr><th>now</th><td>held <b>{{.V.Held}}</b></td><td>receive-ahead <b>{{.V.ReceiveAhead}}</b></td><td>drain <b id="drain">{{.V.Drain.State}}</b></td>{{if ne .V.Drain.State "running"}}<td>given back {{.V.Drain.GivenBack}}, finished {{.V.Drain.Finished}}, abandoned {{.V.Drain.Abandoned}}</td>{{end}}</tr>
</table>
<h2>Last errors</h2>
<table id="errors">
{{range .V.Errors}}<tr><td>{{clock .At}}</td><td>{{.What}}</td><td><code>{{.Error}}</code></td></tr>
{{else}}<tr><td class="muted">none</td></tr>
{{end}}</table>
</body></html>
`))

type row struct {
	L   leaseView
	Bar template.HTML
}

func writeHTML(w http.ResponseWriter, v view, opts Options) {
	rows := make([]row, len(v.InFlight))
	for i, l := range v.InFlight {
		rows[i] = row{L: l, Bar: bar(v, l)}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, struct {
		Title   string
		Refresh int
		V       view
		Rows    []row
	}{opts.Title, int(math.Ceil(opts.Refresh.Seconds())), v, rows})
}

// bar draws l's lease on v's time axis: a bar from receive to deadline
// (grey waiting, green beating, orange never beaten, red lost), a tick per
// beat, a mark where the handler started, a blue line at now.
func bar(v view, l leaseView) template.HTML {
	span := v.to.Sub(v.from)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		return math.Round(float64(barWidth-2)*float64(t.Sub(v.from))/float64(span)*10)/10 + 1
	}
	color := "#9aa0a6"
	switch {
	case l.State == "lease_lost":
		color = "#d93025"
	case l.State == "running" && l.SinceBeat == nil:
		color = "#f29900"
	case l.State == "running":
		color = "#34a853"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bar" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="lease of %s">`,
		barWidth, barHeight, barWidth, barHeight, template.HTMLEscapeString(l.MessageID))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#f5f5f5"/>`, barWidth, barHeight)
	x0, x1 := x(l.ReceivedAt), x(l.Deadline)
	fmt.Fprintf(&b, `<rect class="lease" x="%.1f" y="4" width="%.1f" height="10" rx="2" fill="%s"/>`, x0, max(x1-x0, 1), color)
	if l.StartedAt != nil {
		fmt.Fprintf(&b, `<rect class="start" x="%.1f" y="2" width="2" height="14" fill="#1a1a1a"/>`, x(*l.StartedAt))
	}
	for _, beat := range l.Beats {
		fmt.Fprintf(&b, `<line class="beat" x1="%.1f" x2="%.1f" y1="1" y2="17" stroke="#202124" stroke-width="1.5"/>`, x(beat), x(beat))
	}
	fmt.Fprintf(&b, `<line class="now" x1="%.1f" x2="%.1f" y1="0" y2="18" stroke="#1a73e8" stroke-width="2"/>`, x(v.Now), x(v.Now))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
