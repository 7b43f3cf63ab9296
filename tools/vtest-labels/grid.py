# grid.py LABELS OUT X0 Y0 X1 Y1 S NCOL F1 F2 ... : zoomed crops of several frames in one image
import sys, cv2, numpy as np
from common import frame, load_mot
from sheets import draw_zoom
lab,out=sys.argv[1],sys.argv[2]
x0,y0,x1,y1,s,nc=map(int,sys.argv[3:9]); fs=list(map(int,sys.argv[9:]))
d=load_mot(lab) if lab!='-' else {}
tiles=[]
for f in fs:
    t=draw_zoom(frame(f),d.get(f,[]),x0,y0,x1,y1,s)
    cv2.putText(t,'f%d'%f,(t.shape[1]-70,t.shape[0]-6),cv2.FONT_HERSHEY_PLAIN,1.3,(0,255,255),2)
    tiles.append(t)
while len(tiles)%nc: tiles.append(np.zeros_like(tiles[0]))
rows=[np.hstack([np.pad(t,((0,4),(0,4),(0,0))) for t in tiles[i:i+nc]]) for i in range(0,len(tiles),nc)]
cv2.imwrite(out,np.vstack(rows))
