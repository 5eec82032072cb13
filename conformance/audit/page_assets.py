"""The inline CSS and script of the HTML report (`conformance.audit.html`); no network, no library.

The script draws each card's timeline as SVG inside the card (`div.tl-scroll` scrolls sideways; the page
never does): one lane per server, a real time axis relative to the trace's first event (`+1.234 s`, the
absolute UTC time on hover), gaps to scale down to a minimum spacing, a gap longer than a third of the rest
drawn as a broken axis (two slashes and its length), the events' labels in three staggered rows per lane,
each cut to the room before the next label of its row (the whole label on hover), and every event a
violation of the card involves marked: the judged event of the first violation (red, ringed), its other
events (orange), the events of the violations that follow from it (purple), faults as squares. Clicking an
event (or on load, the judged one) shows the model's state after it in the card's state panel; `-`, `fit`
and `+` zoom the timeline inside the card, keeping the judged event where it was on screen and the event chosen
in the state panel (issue 31). Gap labels of a broken axis are in one row, a label only where it has room (the
break mark always has its length on hover). A card's JSON stores each distinct state once (`states`, events
refer to it by index, each distinct value of a key once in `parts`). Cards not in the page
(`conformance.audit.cards`) are parsed from `#lazy-cards` and put in place of their placeholder when their
"show" button is clicked or a link points into them.
"""

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{margin-bottom:.2em}.verdict{display:inline-block;padding:.3em .8em;border-radius:4px;color:#fff;font-weight:bold}
.valid{background:#2e7d32}.invalid{background:#c62828}.unknown{background:#ef6c00}.unusable{background:#555}
table{border-collapse:collapse;margin:.6em 0;width:100%;table-layout:auto}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3}code,.hash{background:#f6f6f6;padding:0 .2em;overflow-wrap:anywhere;font-size:12px}
.card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1.2em 0;max-width:100%;overflow:hidden}
.card h3{margin:.2em 0 .4em;font-size:16px}.card .rank{color:#888;margin-right:.4em}
blockquote{margin:.3em 0 .3em .2em;padding:.2em .8em;border-left:4px solid #90caf9;background:#f7fbff}
blockquote.seed{border-left-color:#bdbdbd;background:#fafafa;font-style:italic}
.muted{color:#666}.small{font-size:12px}
.tl-bar{display:flex;gap:.4em;align-items:center;margin:.4em 0;font-size:12px;flex-wrap:wrap}
.tl-bar button{font:12px system-ui;padding:0 .6em}
.tl-scroll{overflow-x:auto;overflow-y:hidden;max-width:100%;border:1px solid #eee;background:#fcfcfc}
svg.timeline{display:block}svg.timeline .event{cursor:pointer}
svg.timeline .selected circle,svg.timeline .selected rect,svg.timeline .selected path{stroke:#000;stroke-width:2.5}
.state{border:1px solid #e0e0e0;background:#fffdf5;padding:.4em .8em;margin:.4em 0;font-size:12px}
.state pre{margin:.2em 0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:16em;overflow-y:auto;columns:2 26em}
.legend span{margin-right:1em;white-space:nowrap}.sw{display:inline-block;width:10px;height:10px;border-radius:5px;
margin-right:.3em;vertical-align:middle}
details.follows{margin:.4em 0}details.follows li{margin:.3em 0}details.follows li:target{background:#fff3e0}
.card:target{box-shadow:0 0 0 3px #ffb74d}
@media (min-width:1000px){#rules-table td,#rules-table th,#rules-violated td,#rules-violated th,#rules-not-judged td,
#rules-not-judged th,#rules-idle td,#rules-idle th{white-space:nowrap}#rules-table td:last-child,
#rules-not-judged td:last-child,#rules-idle td:last-child{white-space:normal;overflow-wrap:normal}}
.tbl{overflow-x:auto;max-width:100%}
.why{border:1px solid #ffcc80;background:#fff8e1;border-radius:6px;padding:.4em 1em;margin:.6em 0}
.why ul{margin:.3em 0;padding-left:1.4em}tr.not-judged td{background:#fff8e1}
.first-cause{border:1px solid #ef9a9a;background:#fff5f5;border-radius:6px;padding:.5em 1em;margin:.6em 0}
.first-cause blockquote{font-size:13px}.cause{margin:1.2em 0}details.alike{margin:.2em 0 1em 1em}
details.alike li,ul.cause-first li{margin:.3em 0}.lazy{display:inline}.lazy button{font:12px system-ui;margin-left:.5em}
li.alike-card>.card{display:block}details#inputs-box,details#custody{margin:.6em 0}
"""

JS = r"""
(function(){
  var NS='http://www.w3.org/2000/svg', RIGHT=80, LEFT=96, ROWH=12, LANEH=30+3*ROWH, TOP=34, MINGAP=22, BREAKW=36;
  var COLORS={judged:'#c62828',involved:'#ef6c00',follows:'#7b1fa2','':'#1565c0'};
  function el(n,a,t){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);
    if(t!==undefined)e.textContent=t;return e;}
  function rel(ms){var s=Math.abs(ms)/1000,sign=ms<0?'-':'+';
    if(s<600)return sign+s.toFixed(3)+' s';var m=Math.floor(s/60);
    if(m<60)return sign+m+' min '+(s-60*m).toFixed(3)+' s';
    return sign+Math.floor(m/60)+' h '+(m%60)+' min '+(s-60*m).toFixed(1)+' s';}
  function gapText(ms){return ms<1000?ms+' ms':rel(ms).slice(1);}
  function lines(o,pad){var out=[];Object.keys(o).forEach(function(k){var v=o[k];
    if(v!==null&&typeof v==='object'&&!Array.isArray(v)){out.push(pad+k+':');out=out.concat(lines(v,pad+'    '));}
    else out.push(pad+k+': '+(Array.isArray(v)?(v.length?v.join(', '):'none'):String(v)));});return out;}
  function utc(ms){return new Date(ms).toISOString().replace('T',' ').replace('Z',' UTC');}
  function layout(evs,width){
    // x of each event: gaps to scale, at least `least` apart, a gap over a third of the rest broken
    var gaps=[],i,span=0;for(i=1;i<evs.length;i++){gaps.push(Math.max(0,evs[i].rel-evs[i-1].rel));}
    var broken=gaps.map(function(){return false;});
    for(var round=0;round<6;round++){var rest=0,big=-1;
      gaps.forEach(function(g,j){if(!broken[j])rest+=g;});
      gaps.forEach(function(g,j){if(!broken[j]&&g>rest/3&&rest>0&&(big<0||g>gaps[big]))big=j;});
      if(big<0||gaps.filter(function(g,j){return !broken[j];}).length<2)break;broken[big]=true;}
    gaps.forEach(function(g,j){if(!broken[j])span+=g;});
    var nb=broken.filter(Boolean).length, avail=Math.max(100,width-LEFT-16-RIGHT-nb*BREAKW);
    var scale=span>0?avail/span:0, xs=[LEFT+16], marks=[];
    // the least spacing: MINGAP, less (down to 8 px) when that is what it takes for every event to fit
    var least=Math.max(8,Math.min(MINGAP,avail/Math.max(1,gaps.length-nb)));
    for(var k=0;k<8&&scale>0;k++){var small=0,rest2=0;  // gaps below the least spacing take it: fit the others
      gaps.forEach(function(g,j){if(broken[j])return;if(g*scale<least)small+=least;else rest2+=g;});
      if(rest2<=0)break;var s2=Math.max(0,avail-small)/rest2;if(Math.abs(s2-scale)<1e-9)break;scale=s2;}
    gaps.forEach(function(g,j){var w=broken[j]?BREAKW:Math.max(least,g*scale);
      if(broken[j])marks.push({x:xs[j]+w/2,gap:g});xs.push(xs[j]+w);});
    return {xs:xs,breaks:marks,broken:broken,scale:scale};
  }
  function fit(text,node,room){ // cut a label to `room` px with an ellipsis; '' when nothing fits
    if(node.getComputedTextLength()<=room)return;var s=text;
    while(s.length>1){s=s.slice(0,-1);node.textContent=s+'\u2026';if(node.getComputedTextLength()<=room)return;}
    node.textContent='';}
  var ROLE_TEXT={judged:'the event the first violation was judged at',involved:'an event the first violation involves',
    follows:'an event of a later violation of this entity'};
  function load(box){if(box._data)return box._data;
    var data=box._raw||JSON.parse(box.querySelector('script[type="application/json"]').textContent);
    data.events.forEach(function(e){e.rel=e.ts-data.t0;e.role_text=ROLE_TEXT[e.role]||'';
      var st=(e.state===null||e.state===undefined)?null:data.states[e.state];
      if(st){var o={};Object.keys(st).forEach(function(k){o[k]=data.parts[st[k]];});st=o;}e.state=st;});
    box._data=data;return data;}
  function draw(box,zoom){
    var data=load(box), prev=box.querySelector('.tl-scroll'), anchor=null;
    var evs=data.events, lanes=[];
    if(window.HACONFORM_NO_ANCHOR)box._chosen=null;  // the tests' twin: the redraw as it was before issue 31
    if(prev&&!window.HACONFORM_NO_ANCHOR){var j=prev.querySelector('g.event.judged')||prev.querySelector('g.event');
      if(j){var jx=+j.getAttribute('data-x');anchor={x:jx-prev.scrollLeft};}}
    if(prev)prev.remove();
    evs.forEach(function(e){if(lanes.indexOf(e.node)<0)lanes.push(e.node);});lanes.sort();
    var width=Math.max(200,box.clientWidth*zoom), L=layout(evs,width);
    var W=Math.max(width-2,(L.xs.length?L.xs[L.xs.length-1]:LEFT)+RIGHT);
    var H=TOP+lanes.length*LANEH+(L.breaks.length?26:6);
    var svg=el('svg',{'class':'timeline',width:W,height:H,viewBox:'0 0 '+W+' '+H,role:'img',
      'aria-label':'timeline of '+evs.length+' events on '+lanes.length+' lanes'});
    var scroll=document.createElement('div');scroll.className='tl-scroll';scroll.appendChild(svg);
    box.insertBefore(scroll,box.querySelector('.state'));  // in the document first: texts are measured below
    // the time axis: ticks at round times between unbroken neighbours, labels kept apart
    svg.appendChild(el('line',{x1:LEFT,y1:TOP-14,x2:W-4,y2:TOP-14,stroke:'#999','class':'axis'}));
    var lastX=-1e9, step=1;
    if(L.scale>0){var want=90/L.scale;var p=Math.pow(10,Math.floor(Math.log10(want)));
      step=Math.max(1,[1,2,5,10].map(function(k){return k*p;}).filter(function(s){return s>=want;})[0]||10*p);}
    function tick(x,ms){  // a tick and its label where the label has room, else nothing
      var t=el('text',{x:x,y:TOP-22,'font-size':10,'text-anchor':'middle','class':'tick'},rel(ms));
      svg.appendChild(t);var w=t.getComputedTextLength();
      if(x-w/2<lastX+8){t.remove();return;}lastX=x+w/2;t.appendChild(el('title',{},utc(data.t0+ms)));
      svg.appendChild(el('line',{x1:x,y1:TOP-18,x2:x,y2:TOP-10,stroke:'#999'}));}
    if(evs.length){tick(L.xs[0],evs[0].rel);}
    for(var i=1;i<evs.length;i++){if(L.broken[i-1]){tick(L.xs[i],evs[i].rel);continue;}if(!(L.scale>0))continue;
      var a=evs[i-1].rel,b=evs[i].rel;for(var t=Math.ceil(a/step)*step;t<b;t+=step){if(t<=a)continue;
        tick(L.xs[i-1]+(t-a)/(b-a)*(L.xs[i]-L.xs[i-1]),t);}
      if(b>a)tick(L.xs[i],b);}  // the time at an event where it changes, when the round ticks left room
    var gapEnd=[-1e9,-1e9,-1e9];
    L.breaks.forEach(function(m){var y=TOP-14;
      svg.appendChild(el('rect',{x:m.x-7,y:y-6,width:14,height:12,fill:'#fcfcfc'}));
      var mark=el('path',{d:'M'+(m.x-7)+' '+(y+5)+' l5 -10 M'+(m.x+1)+' '+(y+5)+' l5 -10',stroke:'#555',
        fill:'none','class':'axis-break'});mark.appendChild(el('title',{},'axis broken: '+gapText(m.gap)+' left out'));
      svg.appendChild(mark);
      lanes.forEach(function(n,k){var ly=TOP+k*LANEH+10;
        svg.appendChild(el('line',{x1:m.x,y1:ly-8,x2:m.x,y2:ly+8,stroke:'#bbb','stroke-dasharray':'2,2'}));});
      var g=el('text',{x:m.x,y:0,'font-size':9,fill:'#555','class':'gap'},'\u2248'+gapText(m.gap));
      g.appendChild(el('title',{},'axis broken: '+gapText(m.gap)+' left out'));svg.appendChild(g);
      // one row: a label only where it has room after the previous one (the break mark keeps its title)
      var w=g.getComputedTextLength(), rows=window.HACONFORM_GAP_ROWS||1, row=-1;
      for(var q=0;q<rows;q++){if(gapEnd[q]<m.x-w/2-4){row=q;break;}}
      if(row<0){g.remove();return;}
      g.setAttribute('x',m.x-w/2);g.setAttribute('y',TOP+lanes.length*LANEH+6+row*10);gapEnd[row]=m.x+w/2;});
    lanes.forEach(function(n,k){var y=TOP+k*LANEH+10;
      svg.appendChild(el('line',{x1:LEFT,y1:y,x2:W-4,y2:y,stroke:'#ccc','class':'lane'}));
      var t=el('text',{x:4,y:y+4,'font-size':12,'class':'lane-label'},n);svg.appendChild(t);
      fit(n,t,LEFT-8);t.appendChild(el('title',{},n));});
    var rows={}, panel=box.querySelector('.state'), selected=null;
    function show(e,g){if(selected)selected.classList.remove('selected');selected=g;g.classList.add('selected');
      box._chosen=e.id;
      var head='After #'+e.seq+' '+e.kind+' on '+e.node+' at '+rel(e.rel)+' ('+utc(e.ts)+')';
      panel.querySelector('.state-head').textContent=head;
      var text=e.state?lines(e.state,''):[data.no_state||'no state'], pre=panel.querySelector('pre');
      pre.textContent=text.join('\n');pre.style.columns=text.length>12?'':'1';}
    evs.forEach(function(e,i){var x=L.xs[i], k=lanes.indexOf(e.node), y=TOP+k*LANEH+10;
      var g=el('g',{'class':'event'+(e.role?' '+e.role:'')+(e.fault?' fault':''),'data-seq':e.seq,'data-x':x,
        tabindex:0});
      var c=COLORS[e.role||''], r=e.role==='judged'?8:(e.role?7:5);
      if(e.fault)g.appendChild(el('rect',{x:x-r,y:y-r,width:2*r,height:2*r,fill:e.role?c:'#757575'}));
      else g.appendChild(el('circle',{cx:x,cy:y,r:r,fill:c}));
      if(e.role==='judged')g.appendChild(el('circle',{cx:x,cy:y,r:11,fill:'none',stroke:c,'stroke-width':2}));
      g.appendChild(el('title',{},'#'+e.seq+' '+e.kind+' on '+e.node+'\n'+rel(e.rel)+' after the trace start ('+
        utc(e.ts)+')'+(e.role?'\n'+e.role_text:'')+(e.where?'\n'+e.where:'')+'\n'+e.attrs+
        '\n(click: the model state after it)'));
      svg.appendChild(g);
      // labels: three rows per lane, each cut to the room before the next label of its row
      var lane=rows[e.node]=rows[e.node]||[], row=lane.length%3; lane.push({i:i,x:x,row:row});
      var t=el('text',{x:x-3,y:y+20+row*ROWH,'font-size':10,'class':'label','data-lane':e.node},e.kind);
      t.appendChild(el('title',{},e.kind));g.appendChild(t);e._label=t;
      g.addEventListener('click',function(){show(e,g);});
      if(box._chosen?e.id===box._chosen:(e.role==='judged'&&!selected))show(e,g);});
    Object.keys(rows).forEach(function(n){var lane=rows[n];lane.forEach(function(p,j){
      var next=lane[j+3], room=(next?next.x:W)-p.x-4, t=evs[p.i]._label;
      if(window.HACONFORM_NO_FIT)return;fit(evs[p.i].kind,t,room);});});
    if(!selected&&evs.length){var g0=svg.querySelector('g.event');show(evs[0],g0);}
    if(anchor){var a=svg.querySelector('g.event.judged')||svg.querySelector('g.event');  // the judged event stays put
      if(a)scroll.scrollLeft=Math.max(0,+a.getAttribute('data-x')-anchor.x);}
  }
  function table(d){  // a card's events table, built from its timeline's data when first opened
    if(d.querySelector('table'))return;var box=d.parentElement.querySelector('div.timeline-box');if(!box)return;
    var data=load(box),t=document.createElement('table'),w=document.createElement('div');w.className='tbl';
    var head=t.insertRow();['seq','time','node','kind','log line','role'].forEach(function(h){
      var th=document.createElement('th');th.textContent=h;head.appendChild(th);});
    data.events.forEach(function(e){var r=t.insertRow();[e.seq,rel(e.rel),e.node,e.kind,e.where,e.role].forEach(
      function(v){r.insertCell().textContent=v;});});w.appendChild(t);d.appendChild(w);}
  document.addEventListener('toggle',function(ev){var d=ev.target;
    if(d.tagName==='DETAILS'&&d.classList.contains('events')&&d.open)table(d);},true);
  document.addEventListener('click',function(ev){var s=ev.target.closest&&ev.target.closest('details.events>summary');
    if(s)table(s.parentElement);});
  function setup(root){root.querySelectorAll('div.timeline-box').forEach(function(box){var zoom=1;draw(box,zoom);
    box.querySelectorAll('button[data-zoom]').forEach(function(b){b.addEventListener('click',function(){
      var z=b.getAttribute('data-zoom');zoom=z==='fit'?1:Math.max(1,zoom*parseFloat(z));draw(box,zoom);});});});}
  // cards rendered on demand: their HTML waits, unparsed, in #lazy-cards until one is asked for
  var LAZY=null, ANCHORS=null;
  function store(){if(LAZY!==null)return;
    var c=document.getElementById('lazy-cards'),a=document.getElementById('lazy-anchors');
    LAZY=c?JSON.parse(c.textContent):{};ANCHORS=a?JSON.parse(a.textContent):{};}
  function materialize(k){store();var ph=document.getElementById('c'+k);
    if(!ph||!ph.classList.contains('lazy')||LAZY[k]===undefined)return ph;
    var t=document.createElement('div');t.innerHTML=LAZY[k][0];var card=t.firstElementChild;
    var box=card.querySelector('div.timeline-box');if(box&&LAZY[k][1])box._raw=LAZY[k][1];
    ph.parentNode.replaceChild(card,ph);setup(card);return card;}
  document.addEventListener('click',function(ev){var b=ev.target.closest&&ev.target.closest('button.show');
    if(b){var card=materialize(b.getAttribute('data-card'));if(card&&card.scrollIntoView)card.scrollIntoView();}});
  setup(document);
  if(window.HACONFORM_RENDER_ALL){store();Object.keys(LAZY).forEach(materialize);}
  function openTarget(){var id=location.hash.slice(1);var t=id&&document.getElementById(id);
    if(id&&(!t||t.classList.contains('lazy'))){store();var k=ANCHORS[id]!==undefined?ANCHORS[id]:
      (/^c\d+$/.test(id)?id.slice(1):null);if(k!==null){materialize(k);t=document.getElementById(id);}}
    for(var p=t;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}
    if(t&&t.scrollIntoView)t.scrollIntoView();}
  window.addEventListener('hashchange',openTarget);openTarget();
})();
"""
