#!/usr/bin/python3
"""Why a kind's truth regions are missed and its detections false, by what the
detection does to them (bench/detect, docs/scanned.md).

  /usr/bin/python3 tools/pdf-truth/inline-errors.py TRUTH_DIR PRED_DIR [KIND] [N]

TRUTH_DIR holds NAME.truth.json, PRED_DIR NAME.json (formulate-cli pdf NAME.pdf
--detect-only --format json). Matching as score.py (same kind, IoU >= 0.5).
A missed truth region is "missed" (no region of any kind covers 30 % of it),
"joined-with-other-truth" (a region of the kind holds 80 % of it and of another
truth region: two formulas in one box), "too-big(prose)" (holds it and prose),
"split" / "cut(part)" (regions cover parts of it), "as-KIND" (found as another
kind). A false detection is "prose" (touches no truth region), "covers-several",
"part-of-truth" (90 % of it inside one truth region), "overlaps+prose" or
"on-KIND". KIND defaults to inline; N prints N examples of each.
"""
import collections
import glob
import json
import os
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 else 2)
def iou(a,b):
    x0=max(a[0],b[0]);y0=max(a[1],b[1]);x1=min(a[2],b[2]);y1=min(a[3],b[3])
    if x1<=x0 or y1<=y0: return 0.0
    i=(x1-x0)*(y1-y0); A=(a[2]-a[0])*(a[3]-a[1]); B=(b[2]-b[0])*(b[3]-b[1]); return i/(A+B-i)
def inter(a,b):
    x0=max(a[0],b[0]);y0=max(a[1],b[1]);x1=min(a[2],b[2]);y1=min(a[3],b[3])
    return 0 if x1<=x0 or y1<=y0 else (x1-x0)*(y1-y0)
def area(a): return max(0,(a[2]-a[0]))*max(0,(a[3]-a[1]))
kind=sys.argv[3] if len(sys.argv)>3 else 'inline'
tdir,pdir=sys.argv[1],sys.argv[2]
FN=collections.Counter();FP=collections.Counter();ex=collections.defaultdict(list)
NT=NP=0
for tf in sorted(glob.glob(tdir+'/*.truth.json')):
    n=os.path.basename(tf)[:-11]
    pf=pdir+'/'+n+'.json'
    if not os.path.exists(pf): continue
    T=json.load(open(tf)); P=json.load(open(pf))
    for page in sorted(set(r['page'] for r in T['regions'])|set(r['page'] for r in P['regions'])):
        ta=[r for r in T['regions'] if r['page']==page]; pa=[r for r in P['regions'] if r['page']==page]
        tk=[r for r in ta if r['kind']==kind]; pk=[r for r in pa if r['kind']==kind]
        NT+=len(tk);NP+=len(pk)
        pairs=sorted([(iou(t['box'],p['box']),i,j) for i,t in enumerate(tk) for j,p in enumerate(pk)],reverse=True)
        mt=set();mp=set()
        for v,i,j in pairs:
            if v<0.5: break
            if i in mt or j in mp: continue
            mt.add(i);mp.add(j)
        for i,t in enumerate(tk):
            if i in mt: continue
            tb=t['box'];ta_=area(tb) or 1e-9
            cov=[p for p in pa if inter(tb,p['box'])>0.3*ta_]
            if not cov:
                c='missed'
            else:
                other=[p for p in cov if p['kind']!=kind]
                big=[p for p in cov if p['kind']==kind and inter(tb,p['box'])>0.8*ta_]
                if other and not big: c='as-'+other[0]['kind']
                elif big:
                    p=big[0]['box']; nin=sum(1 for u in ta if inter(u['box'],p)>0.5*(area(u['box']) or 1e-9))
                    c='joined-with-other-truth' if nin>1 else 'too-big(prose)'
                else:
                    c='split' if len(cov)>1 else 'cut(part)'
            FN[c]+=1; ex['FN '+c].append((n,page,t.get('latex','')[:50]))
        for j,p in enumerate(pk):
            if j in mp: continue
            pb=p['box'];pa_=area(pb) or 1e-9
            hit=[t for t in ta if inter(pb,t['box'])>0]
            if not hit: c='prose'
            else:
                mx=max(hit,key=lambda t:inter(pb,t['box']))
                frac=inter(pb,mx['box'])/pa_
                ins=[t for t in ta if inter(t['box'],pb)>0.5*(area(t['box']) or 1e-9)]
                if len(ins)>1: c='covers-several'
                elif mx['kind']!=kind: c='on-'+mx['kind']
                elif frac>0.9: c='part-of-truth'
                else: c='overlaps+prose'
            FP[c]+=1; ex['FP '+c].append((n,page,[round(x) for x in pb]))
print(kind,'truth',NT,'pred',NP)
print('FN',sum(FN.values()),dict(FN.most_common()))
print('FP',sum(FP.values()),dict(FP.most_common()))
if len(sys.argv)>4:
    for k,v in ex.items(): print(k, v[:int(sys.argv[4])])
