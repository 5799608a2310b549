"""The HTML report's inline style sheet and its one script (sorting the per-class table): no
external resource, so the page opens offline."""

CSS = """
:root{--ink:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#f5f7fb;--card:#fff;--accent:#2563eb;
--good:#16a34a;--bad:#dc2626}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"DejaVu Sans",sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 48px}
header{display:flex;justify-content:space-between;align-items:flex-end;gap:24px;
border-bottom:1px solid var(--line);padding-bottom:16px;margin-bottom:22px}
h1{font-size:24px;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:16px;margin:0 0 12px}
.sub{color:var(--muted);font-size:13px;word-break:break-all}
.brand{color:var(--muted);font-size:12px;text-align:right;white-space:nowrap}
.brand b{color:var(--accent)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:18px 20px;margin:0 0 18px;box-shadow:0 1px 2px rgba(16,24,40,.04)}
section.bare{background:none;border:0;box-shadow:none;padding:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .k{color:var(--muted);font-size:13px;font-weight:600;letter-spacing:.02em}
.card .v{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums;margin-top:2px}
.card .n{color:var(--muted);font-size:12px}
.card.main{border-top:3px solid var(--accent)}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
figure{margin:0}
figure img{display:block;max-width:100%;height:auto;margin:0 auto}
.grid2 figure img{width:100%}
.capped figure img{max-height:430px;object-fit:contain}
figcaption{color:var(--muted);font-size:12px;margin-top:8px;text-align:center}
.drawings{display:grid;grid-template-columns:repeat(3,1fr);gap:14px}
@media (max-width:900px){.drawings{grid-template-columns:1fr}}
svg.boxes{display:block;width:100%;height:260px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 9px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{font-size:12.5px;color:var(--muted);font-weight:600;
letter-spacing:.03em;background:#fafbfc;position:sticky;top:0}
th:first-child,td:first-child,td.k,th.k{text-align:left}
td.k{font-weight:500}
td.name{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:110px;max-width:320px;font-weight:500}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{color:var(--ink)}
th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
tbody tr:hover{background:#f9fafb}
td.bar{background:linear-gradient(90deg,rgba(37,99,235,.16) calc(var(--v)*100%),transparent 0)
no-repeat center/100% 70%;font-weight:600}
td.na{color:#9ca3af}
td.pos,.v.pos{color:var(--good)}td.neg,.v.neg{color:var(--bad)}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;font-size:13px}
.kv dt{color:var(--muted)}.kv dd{margin:0;word-break:break-all;font-family:ui-monospace,
SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.note{color:var(--muted);font-size:12px;margin:8px 0 0}
.warn{background:#fffbeb;border-color:#fde68a}
.warn li{margin:2px 0}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
.scroll{max-height:560px;overflow:auto;border:1px solid var(--line);border-radius:8px}
.scroll table th{box-shadow:0 1px 0 var(--line)}
"""

# sorts a table.sortable by the clicked column (numbers by data-v, text otherwise)
JS = """
document.querySelectorAll("table.sortable").forEach(function(t){
  var hs=t.tHead.rows[0].cells;
  Array.prototype.forEach.call(hs,function(h,i){h.addEventListener("click",function(){
    var cur=h.getAttribute("aria-sort"),c0=t.tBodies[0].rows[0];
    var text=c0&&c0.cells[i]&&c0.cells[i].getAttribute("data-v")===null;
    var asc=cur?cur==="descending":text;
    Array.prototype.forEach.call(hs,function(x){x.removeAttribute("aria-sort");});
    h.setAttribute("aria-sort",asc?"ascending":"descending");
    var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);
    function key(r){var c=r.cells[i],v=c.getAttribute("data-v");
      return v===null?c.textContent.toLowerCase():(v===""?null:parseFloat(v));}
    rows.sort(function(a,c){var x=key(a),y=key(c);
      if(x===y)return 0;if(x===null)return 1;if(y===null)return -1;
      return (x<y?-1:1)*(asc?1:-1);});
    rows.forEach(function(r){b.appendChild(r);});
  });});
});
"""
