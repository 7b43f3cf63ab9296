# Step 1b: turn the automatic tracks (auto_tracks.txt) into starting keyframes (keyframes_auto.txt):
# each track's box on its first and last frame and on frames 1, 11, 21, ... in between, flagged "s".
# keyframes.txt was started from these lines, then re-numbered, split and corrected by hand.
import collections
tr=collections.defaultdict(dict)
for l in open('auto_tracks.txt'):
    v=l.strip().split(','); tr[int(v[1])][int(v[0])]=[round(float(t)) for t in v[2:6]]
out=[]
for i,d in sorted(tr.items()):
    fs=sorted(d); keys=[fs[0]]+[f for f in fs if f%10==1 and f>fs[0]+3 and f<fs[-1]-3]+[fs[-1]]
    for f in keys: out.append('%d %d %d %d %d %d s'%(i,f,*d[f]))
open('keyframes_auto.txt','w').write('\n'.join(out)+'\n')
print(len(out))
