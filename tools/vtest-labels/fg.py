# foreground = colour distance to the median background; saves masks for frames 1..300 as one npz
import cv2, numpy as np
bg=cv2.imread('bg.png').astype(np.int16)
masks=np.zeros((300,576,768),np.uint8)
for f in range(1,301):
    im=cv2.imread('frames/%04d.jpg'%f).astype(np.int16)
    d=np.abs(im-bg).max(axis=2).astype(np.uint8)
    d=cv2.GaussianBlur(d,(3,3),0)
    m=(d>28).astype(np.uint8)
    m=cv2.morphologyEx(m,cv2.MORPH_OPEN,np.ones((2,2),np.uint8))
    m=cv2.morphologyEx(m,cv2.MORPH_CLOSE,np.ones((5,3),np.uint8))
    masks[f-1]=m
np.savez_compressed('fg.npz',m=masks)
