# median background over the whole clip (fixed camera), sampled every 8th frame
import os
import cv2, numpy as np
cap=cv2.VideoCapture(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'samples', 'vtest.avi'))
fr=[];i=0
while True:
    ok,f=cap.read()
    if not ok: break
    if i%8==0: fr.append(f)
    i+=1
bg=np.median(np.stack(fr),axis=0).astype(np.uint8)
cv2.imwrite('bg.png',bg)
print(len(fr))
